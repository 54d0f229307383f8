// Issue 12, parts 1, 2 and 4: starter tokens, runs charged from the runner's
// balance in the same database call that ends the run, owners of paid agents
// earning a share. The fake host plays the engine's frames with known usage.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, AgentWriteBody, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 10_000, ownerShare: 0.2, guestRunMinBalance: 100 }) // 50 guest runs at once on 10,000 tokens (billing-guest-floor.test.ts tests the floor);
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
const ledger = async (key: string) => (await t.client(key).billing.ledger({ pageSize: 100 })).items;

/** The plain 202 of a session opened with a first message (not the 201 of a bare session). */
function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r, `a run accepted, got ${JSON.stringify(r)}`);
  return r;
}

/** An owner, its host, and an agent on it: private and free by default; `paid` or `public` ones are published (approved). */
async function ownerWithAgent(opts: { pay?: 'free' | 'paid'; public?: boolean; capacity?: number } = {}) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: opts.capacity ?? 1 });
  const published = opts.pay === 'paid' || opts.public === true;
  const body: AgentWriteBody = published
    ? { name: `${opts.pay ?? 'free'}-helper`, scope: 'public', pay: opts.pay ?? 'free', step: 'submit', hostId, engine: 'claude-code', workDir: '' }
    : { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir: '' };
  const a = await agentWhenReady(t.client(owner.key), body);
  const agentId = a.id;
  if (published) assert.equal((await t.admin.admin.approveAgent(agentId)).id, agentId);
  return { owner, host, agentId };
}

/** Opens a session with a first message and plays its turn with the given usage; resolves once the session is idle again. */
async function runTurn(key: string, agentId: string, host: FakeHost, usage: { inputTokens: number; outputTokens: number }) {
  const before = host.frames.filter((f) => f.t === 'run.start').length;
  const c = t.client(key);
  const r = accepted(await c.sessions.create({ agentId, content: 'do it' }));
  const start: any = await eventually(async () => host.frames.filter((f) => f.t === 'run.start')[before], 5000, 10);
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage });
  await eventually(async () => {
    const s = await c.sessions.get(r.sessionId);
    return s.status === 'active' ? s : undefined;
  }, 5000, 20);
  return { sessionId: r.sessionId, runId: start.runId as string };
}

test('a new account starts with STARTER_TOKENS, recorded as a grant in its ledger', async () => {
  const u = await t.user();
  assert.equal(await balance(u.key), 10_000);
  const l = await ledger(u.key);
  assert.equal(l.length, 1);
  assert.deepEqual([l[0].type, l[0].amount, l[0].balanceAfter, l[0].note], ['grant', 10_000, 10_000, 'starter tokens']);
  const created = await t.admin.admin.createUser({ name: 'carol' });
  assert.equal(created.user.balance, 10_000, 'the creation answer shows the starting balance');
});

test('a finished run debits exactly inputTokens + outputTokens × 2, one spend entry per run with ref = run id', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  const { runId, sessionId } = await runTurn(owner.key, agentId, host, { inputTokens: 1234, outputTokens: 321 });
  const cost = 1234 + 321 * 2;
  assert.equal(await balance(owner.key), 10_000 - cost);
  const spends = (await ledger(owner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 1);
  assert.deepEqual([spends[0].amount, spends[0].ref, spends[0].balanceAfter], [-cost, runId, 10_000 - cost]);
  assert.equal((await t.client(owner.key).sessions.cost(sessionId)).cost, cost, 'the session cost and the charge agree');
  // An owner using its own (free) agent earns nothing (its own paid one: the next test).
  assert.equal((await ledger(owner.key)).filter((e) => e.type === 'earn').length, 0);
  host.close();
});

// Audit by mutation (fifty-second session): the two earn tests below were missing; dropping either condition
// of the earn rule (not the runner's own agent; a paid agent) left the suite green.
test('an owner running its own paid agent pays the cost and earns nothing', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ pay: 'paid' });
  await runTurn(owner.key, agentId, host, { inputTokens: 1000, outputTokens: 500 }); // cost 2000
  assert.equal(await balance(owner.key), 10_000 - 2000);
  assert.deepEqual((await ledger(owner.key)).map((e) => e.type), ['spend', 'grant']);
  assert.equal((await t.client(owner.key).agents.manage(agentId)).earn, 0);
  host.close();
});

test('a run on someone else\'s free agent earns its owner nothing', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ public: true });
  const runner = await t.user();
  await runTurn(runner.key, agentId, host, { inputTokens: 1000, outputTokens: 500 });
  assert.equal(await balance(runner.key), 10_000 - 2000);
  assert.equal(await balance(owner.key), 10_000);
  assert.deepEqual((await ledger(owner.key)).map((e) => e.type), ['grant']);
  const stats = await eventually(async () => {
    const s = await t.client(owner.key).agents.stats(agentId);
    return s.cost === 2000 ? s : undefined;
  }, 3000, 50);
  assert.equal(stats.earn, 0);
  assert.equal((await t.client(owner.key).agents.manage(agentId)).earn, 0);
  host.close();
});

test('a run is charged in full even when that takes the balance below zero', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  await runTurn(owner.key, agentId, host, { inputTokens: 9_000, outputTokens: 1_000 });
  assert.equal(await balance(owner.key), 10_000 - 11_000);
  const l = await ledger(owner.key);
  assert.equal(l[0].balanceAfter, -1_000);
  assert.equal(l.reduce((s, e) => s + e.amount, 0), -1_000, 'the ledger adds up to the balance');
  host.close();
});

test('a run on someone else\'s paid agent credits the owner OWNER_SHARE of the cost; counters, ledger and stats agree', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ pay: 'paid' });
  const runner = await t.user();
  const { runId } = await runTurn(runner.key, agentId, host, { inputTokens: 1000, outputTokens: 500 }); // cost 2000
  assert.equal(await balance(runner.key), 10_000 - 2000, 'the runner pays the full cost');
  assert.equal(await balance(owner.key), 10_000 + 400, 'the owner earns 20 %');
  const earn = (await ledger(owner.key)).filter((e) => e.type === 'earn');
  assert.equal(earn.length, 1);
  assert.deepEqual([earn[0].amount, earn[0].ref], [400, runId]);
  const stats = await eventually(async () => {
    const s = await t.client(owner.key).agents.stats(agentId);
    return s.earn === 400 ? s : undefined;
  }, 3000, 50);
  assert.equal(stats.cost, 2000);
  assert.equal(stats.runs, 1);
  const manage = await t.client(owner.key).agents.manage(agentId);
  assert.equal(manage.earn, 400);
  // A second run: the share lands once per run.
  await runTurn(runner.key, agentId, host, { inputTokens: 10, outputTokens: 0 }); // cost 10 → 2
  assert.equal(await balance(owner.key), 10_000 + 402);
  assert.equal((await ledger(owner.key)).filter((e) => e.type === 'earn').length, 2);
  host.close();
});

test('an aborted run is charged for the usage known, including usage the host reports after the abort', async () => {
  const { owner, host, agentId } = await ownerWithAgent();
  const c = t.client(owner.key);
  const r = accepted(await c.sessions.create({ agentId, content: 'long job' }));
  const start: any = await eventually(async () => host.frames.find((f) => f.t === 'run.start'), 5000, 10);
  assert.equal((await c.sessions.abort(r.sessionId)).status, 'aborted');
  await eventually(async () => host.frames.find((f) => f.t === 'run.abort'), 5000, 10);
  host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 100, outputTokens: 50 } });
  await eventually(async () => ((await balance(owner.key)) === 10_000 - 200 ? true : undefined), 5000, 50);
  const spends = (await ledger(owner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 1);
  assert.equal(spends[0].ref, start.runId);
  const cost = await c.sessions.cost(r.sessionId);
  assert.equal(cost.cost, 200);
  host.close();
});

test('50 concurrent run ends never put the ledger out of balance (sum of entries = balance)', async () => {
  const { owner, host, agentId } = await ownerWithAgent({ pay: 'paid', capacity: 50 });
  const runner = await t.user();
  const c = t.client(runner.key);
  const opened = await Promise.all(Array.from({ length: 50 }, () => c.sessions.create({ agentId, content: 'go' })));
  for (const o of opened) accepted(o);
  const starts: any[] = await eventually(async () => {
    const s = host.frames.filter((f) => f.t === 'run.start');
    return s.length === 50 ? s : undefined;
  }, 10_000, 20);
  for (const [i, s] of starts.entries()) host.send({ t: 'run.end', runId: s.runId, ok: true, usage: { inputTokens: 10 + i, outputTokens: i } });
  const expected = starts.reduce((sum, _s, i) => sum + (10 + i) + i * 2, 0);
  await eventually(async () => ((await balance(runner.key)) === 10_000 - expected ? true : undefined), 10_000, 50);
  for (const u of [runner, owner]) {
    const l = await ledger(u.key);
    assert.equal(l.reduce((s, e) => s + e.amount, 0), await balance(u.key), 'the ledger adds up to the balance');
  }
  const spends = (await ledger(runner.key)).filter((e) => e.type === 'spend');
  assert.equal(spends.length, 50);
  assert.equal(new Set(spends.map((e) => e.ref)).size, 50, 'one entry per run');
  const earned = starts.reduce((sum, _s, i) => sum + Math.floor(((10 + i) + i * 2) * 0.2), 0);
  assert.equal(await balance(owner.key), 10_000 + earned);
  host.close();
});
