// The message path's facts come as values, not promises, when this node knows
// them in this turn: the agent a send may use (the catalog and the caller's
// shares), the agent's mode ceiling for run.start, and a held host's capacity.
// Every await is a promise, and once MikroORM has run, Node 20's promise hooks
// make each one cost (bench/RESULTS.md, twenty-seventh session: 96 → 69
// promises per message). The rule answered is the same either way.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { resolveUsableAgent, modeFactsOf } from '../src/agents/usage.js';
import { catalogOn } from '../src/agents/catalog.js';
import { HubError } from '../src/errors.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
let host: FakeHost | undefined;
let owner: { id: string; key: string };
let hostId: string;
let agentId: string;

before(async () => {
  t = await startTestHub();
  owner = await t.user('values');
  const paired = await pairHost(t, owner.key);
  hostId = paired.hostId;
  host = await connectFakeHost(t, paired.credential, { capacity: 3 });
  const c = t.client(owner.key);
  agentId = (await agentWhenReady(c, { name: 'values', scope: 'private', hostId, engine: 'claude-code' })).id;
});
after(async () => {
  host?.close();
  await t.close();
});

/** What a call gave: 'value' or 'promise', and what it settled to (the agent's owner, or the error's kind). */
async function shape(call: () => unknown): Promise<{ as: 'value' | 'promise' | 'throw'; got: string }> {
  let r: unknown;
  try {
    r = call();
  } catch (e) {
    return { as: 'throw', got: e instanceof HubError ? e.kind : String(e) };
  }
  const as = r instanceof Promise ? 'promise' : 'value';
  try {
    const v = (await r) as { ownerId?: string } | undefined;
    return { as, got: v?.ownerId ?? String(v) };
  } catch (e) {
    return { as, got: e instanceof HubError ? e.kind : String(e) };
  }
}

test('a usable agent: a value once the catalog and the caller\'s shares are known; the same rule either way', async () => {
  const ctx = t.hub.ctx;
  await catalogOn(ctx.bus)!.fresh();
  await resolveUsableAgent(ctx, owner.id, agentId); // the owner's favorites and shares are read once
  assert.deepEqual(await shape(() => resolveUsableAgent(ctx, owner.id, agentId)), { as: 'value', got: owner.id });
  // Another account's private agent: NOT_FOUND by the same path as an unknown id, the database's (refused from
  // memory, its 404 came faster and told the id existed: security-agent-exists-oracle.test.ts).
  const stranger = await t.user();
  assert.deepEqual(await shape(() => resolveUsableAgent(ctx, stranger.id, agentId)), { as: 'promise', got: 'NOT_FOUND' }, 'first call reads the stranger\'s shares');
  assert.deepEqual(await shape(() => resolveUsableAgent(ctx, stranger.id, agentId)), { as: 'promise', got: 'NOT_FOUND' });
  // An unknown agent is asked of the database: a promise, NOT_FOUND.
  assert.deepEqual(await shape(() => resolveUsableAgent(ctx, owner.id, 'agt_missing')), { as: 'promise', got: 'NOT_FOUND' });
  // A change makes the catalog refresh first: a promise, then the new answer (disabled → AGENT_UNUSABLE).
  await t.client(owner.key).agents.update(agentId, { enable: false });
  await eventually(async () => (await shape(() => resolveUsableAgent(ctx, owner.id, agentId))).got === 'AGENT_UNUSABLE', 5000, 20);
  assert.deepEqual(await shape(() => resolveUsableAgent(ctx, owner.id, agentId)), { as: 'throw', got: 'AGENT_UNUSABLE' });
  await t.client(owner.key).agents.update(agentId, { enable: true });
  await eventually(async () => (await shape(() => resolveUsableAgent(ctx, owner.id, agentId))).got === owner.id, 5000, 20);
});

test('an agent\'s mode ceiling and a held host\'s capacity: values in this turn', async () => {
  const ctx = t.hub.ctx;
  await catalogOn(ctx.bus)!.fresh();
  assert.deepEqual(await shape(() => modeFactsOf(ctx, agentId)), { as: 'value', got: owner.id });
  assert.deepEqual(await shape(() => modeFactsOf(ctx, 'agt_missing')), { as: 'promise', got: 'undefined' });
  const held = t.hub.runFrames.gateway.presenceToSend(hostId);
  assert.ok(!(held instanceof Promise), 'a host held here answers from its channel');
  assert.deepEqual(held, { status: 'online', capacity: 3 });
});

test('warm sends and their run ends fork no EntityManager: the batches share one for their raw SQL', async () => {
  const c = t.client(owner.key);
  const sid = ((await c.sessions.create({ agentId })) as SessionView).id;
  const started = new Set<string>();
  const turn = async (content: string) => {
    await c.sessions.send(sid, { content }); // processing, or queued behind the previous run's end on its way
    const start = (await host!.next((f) => f.t === 'run.start' && f.sessionId === sid && !started.has(f.runId), 5000)) as { runId: string };
    started.add(start.runId);
    host!.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  };
  await turn('warm'); // caches filled: the session's agent, the owner's shares
  const ctx = t.hub.ctx;
  const fork = ctx.em;
  let forks = 0;
  ctx.em = () => (forks++, fork());
  // Forks that are neither a send nor a run end, counted apart: the status reads below, and the market
  // catalog's reloads of the agent whose counters the run ends changed (one notice per 250 ms: how
  // many fall in the window depends on the machine's speed).
  const cat = catalogOn(ctx.bus) as unknown as { query: (...a: unknown[]) => Promise<unknown> };
  const query = cat.query;
  let reloads = 0;
  cat.query = function (this: unknown, ...a: unknown[]) {
    reloads++;
    return query.apply(this, a);
  };
  let reads = 0;
  try {
    for (let i = 0; i < 5; i++) await turn(`m${i}`); // each waits for the previous run's end to be written
    await eventually(async () => (reads++, (await c.sessions.get(sid)).status === 'active'), 5000, 20);
  } finally {
    ctx.em = fork;
    cat.query = query;
  }
  const raw = ctx.rawEm();
  assert.equal(ctx.rawEm(), raw, 'one raw-SQL EntityManager');
  assert.ok(forks <= reads + reloads, `${forks} forks for 5 messages and their ends: ${reads} status reads and ${reloads} catalog reloads are not theirs`);
  assert.ok(reloads <= 5, `${reloads} catalog reloads: at most one per run end`);
});
