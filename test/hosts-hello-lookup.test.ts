// A hello costs one look-up of the host's tasks: the same query says which
// open runs the channel may speak for, which waiting work drains, and which
// runs were lost while the host was away (sessions/scheduler.ts hostsUp). The
// drain comes after the channel is admitted, so it knows its capacity.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub, wrapHubQueries } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { SessionView } from '../src/client/index.js';
import { CloseCodes } from '../host-protocol/version.js';
import type { RunResolver } from '../src/hosts/channel-runs.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

/** Counts the queries that read the open tasks of hosts that said hello (every query, through knex or not, is a node-postgres Client's). */
function countTaskLookups(): { count: () => number; stop: () => void } {
  let n = 0;
  // The hello's look-up (before: the open runs, `id, host_id`, and a second one for waiting work and lost runs).
  const stop = wrapHubQueries(t.hub, (q, send) => {
    if (/^select id, (status, host_id, session_id, agent_id, engine|host_id) from session_tasks\s+where host_id (in \([^)]*\)|= any\(\$1::text\[\]\)) and status in /.test(q.text)) n++;
    return send();
  });
  return { count: () => n, stop };
}

test('a hello reads its host\'s tasks once; the channel speaks for its open run, and the host\'s waiting work starts', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const first = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(first);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'hello-lookup', scope: 'private', hostId, engine: 'claude-code' });
  const a = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;
  const b = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;
  const startA = first.next((f: any) => f.t === 'run.start');
  assert.equal((await c.sessions.send(a, { content: 'a1' })).status, 'processing');
  const runA: any = await startA;
  const queued = await c.sessions.send(b, { content: 'b1' });
  assert.equal(queued.status, 'queued', 'the host runs one at a time');
  assert.equal(queued.queueReason, 'host_capacity');

  // The host connects again, still running a1 (a new channel replaces the old one, so the host is never
  // down meanwhile): one look-up of its tasks, not one per concern.
  const lookups = countTaskLookups();
  // The drain runs once the channel is admitted, so it knows the channel's capacity: no presence read.
  const gateway = t.hub.runFrames.gateway as unknown as { presence(id: string): Promise<unknown> };
  const presence = gateway.presence.bind(gateway);
  let presenceReads = 0;
  gateway.presence = (id: string) => {
    if (id === hostId) presenceReads++;
    return presence(id);
  };
  try {
    const second = await connectFakeHost(t, credential, { capacity: 2, running: [runA.runId] });
    hosts.push(second);
    assert.equal((await first.closed).code, CloseCodes.REPLACED.code, 'the old channel was replaced');
    // Its waiting work starts (capacity 2 now), and the run it kept may speak: its end is taken.
    const startB: any = await second.next((f: any) => f.t === 'run.start' && f.prompt === 'b1');
    assert.equal(lookups.count(), 1, 'one query for the hello\'s open runs, waiting work and lost runs');
    assert.equal(presenceReads, 0, 'the drain knew the admitted channel\'s capacity');
    second.send({ t: 'run.end', runId: runA.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    second.send({ t: 'run.end', runId: startB.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => {
      const [sa, sb] = await Promise.all([c.sessions.get(a), c.sessions.get(b)]);
      return sa.status === 'active' && sb.status === 'active' || undefined;
    }, 5000, 20);
    const knex = t.hub.ctx.orm.em.getConnection().getKnex();
    const status = async (id: string) => ((await knex.raw('select status from session_tasks where id = ?', [id])) as { rows: Array<{ status: string }> }).rows[0]?.status;
    assert.equal(await status(runA.runId), 'completed', 'the new channel spoke for the run it kept');
    assert.equal(await status(startB.runId), 'completed');
  } finally {
    gateway.presence = presence;
    lookups.stop();
  }
});

test('a message sent while the hello\'s look-up is in flight starts: the channel held here is online, not "offline" from presence naming this node', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const c = t.client(u.key);
  // Hold the look-up of the open runs of the hellos (one query in flight, hosts/channel-runs.ts) until released.
  const runs = (t.hub.runFrames.gateway as unknown as { runs: { resolver: RunResolver } }).runs;
  const resolve = runs.resolver;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  runs.resolver = async (hellos) => {
    await gate;
    return resolve(hellos);
  };
  try {
    const host = await connectFakeHost(t, credential, { capacity: 1 });
    hosts.push(host);
    const agent = await agentWhenReady(c, { name: 'unsettled', scope: 'private', hostId, engine: 'claude-code' });
    const started = host.next((f: any) => f.t === 'run.start');
    // Before: presence names this node, the channel was not yet settled, and the send read that as a
    // closed channel whose removal was on its way: 503 "the agent's host is offline".
    const sent = await c.sessions.create({ agentId: agent.id, content: 'right after hello' });
    assert.equal((sent as { status: string }).status, 'processing');
    release();
    const start: any = await started;
    assert.equal(start.prompt, 'right after hello');
    // The run is the channel's own: its end is taken once the look-up has answered.
    host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    const sid = (sent as { sessionId: string }).sessionId;
    await eventually(async () => (await c.sessions.get(sid)).status === 'active' || undefined, 5000, 20);
  } finally {
    release();
    runs.resolver = resolve;
  }
});

test('a hello whose look-up of open runs fails closes its channel (GOING_AWAY): the host reconnects, is looked up again and speaks for its run', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const c = t.client(u.key);
  const first = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(first);
  const agent = await agentWhenReady(c, { name: 'lookup-fails', scope: 'private', hostId, engine: 'claude-code' });
  const sent = await c.sessions.create({ agentId: agent.id, content: 'long turn' });
  const sid = (sent as { sessionId: string }).sessionId;
  const start: any = await first.next((f: any) => f.t === 'run.start');
  const runs = (t.hub.runFrames.gateway as unknown as { runs: { resolver: RunResolver } }).runs;
  const resolve = runs.resolver;
  runs.resolver = async () => {
    throw new Error('database away');
  };
  let second: FakeHost;
  try {
    second = await connectFakeHost(t, credential, { capacity: 1, running: [start.runId] });
    hosts.push(second);
    // Its run frames wait for the look-up; without an answer the channel must not sit on them for good.
    second.send({ t: 'run.delta', runId: start.runId, text: 'held' });
    const closed = await Promise.race([second.closed, new Promise<{ code: string }>((r) => setTimeout(() => r({ code: 'still open after 10 s' }), 10_000))]);
    assert.equal(closed.code, CloseCodes.GOING_AWAY.code);
  } finally {
    runs.resolver = resolve;
  }
  const third = await connectFakeHost(t, credential, { capacity: 1, running: [start.runId] });
  hosts.push(third);
  third.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => (await c.sessions.get(sid)).status === 'active' || undefined, 5000, 20);
});
