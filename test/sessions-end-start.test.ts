// A run's end starts the next waiting run itself: hub_end_runs claims the
// host's waiting work inside the same call (hub_claim, the one rule), so a
// session with queued messages costs no separate claim per message. The rule
// still holds: one session's messages in order, the oldest waiting session
// first, the host's capacity, the settings lease.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
const hosts: FakeHost[] = [];
/** Claims made outside a run's end (the scheduler's drains), counted by wrapping the scheduler. */
let drains = 0;
before(async () => {
  t = await startTestHub();
  const s = t.hub.runFrames.scheduler as unknown as { drainOnce(hostId: string): Promise<void> };
  const orig = s.drainOnce.bind(s);
  s.drainOnce = (hostId: string) => {
    drains++;
    return orig(hostId);
  };
});
after(async () => {
  for (const h of hosts) h.close();
  await t.close();
});

async function setup(capacity: number, sessions: number) {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity });
  hosts.push(host);
  const starts: Array<{ runId: string; sessionId: string; prompt: string }> = [];
  host.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    if (f?.t === 'run.start') starts.push({ runId: f.runId, sessionId: f.sessionId, prompt: f.prompt });
  });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'ends', scope: 'private', hostId, engine: 'claude-code' });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) ids.push(((await c.sessions.create({ agentId: agent.id })) as SessionView).id);
  const end = (runId: string) => host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  const startOf = (prompt: string) => eventually(async () => starts.find((s) => s.prompt === prompt), 5000, 10);
  return { u, c, hostId, host, starts, ids, end, startOf };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('when a run ends, the session\'s next waiting message starts without a claim of its own, in order', async () => {
  const { c, ids: [sid], starts, end, startOf } = await setup(1, 1);
  const first = await c.sessions.send(sid, { content: 'm1' });
  assert.equal(first.status, 'processing');
  for (const m of ['m2', 'm3', 'm4']) assert.equal((await c.sessions.send(sid, { content: m })).status, 'queued');
  let run = await startOf('m1');
  await sleep(100); // let any drain the sends planned finish
  drains = 0;
  for (const m of ['m2', 'm3', 'm4']) {
    end(run.runId);
    run = await startOf(m);
  }
  assert.deepEqual(starts.map((s) => s.prompt), ['m1', 'm2', 'm3', 'm4'], 'one run at a time, in the order sent');
  assert.equal(drains, 0, 'no claim outside the run ends');
  end(run.runId);
  await eventually(async () => ((await c.sessions.get(sid)) as SessionView).status === 'active' || undefined, 5000, 20);
});

test('a run\'s end starts the oldest waiting session first and keeps to the host\'s capacity', async () => {
  const { c, ids: [a, b], starts, end, startOf } = await setup(1, 2);
  assert.equal((await c.sessions.send(a, { content: 'a1' })).status, 'processing');
  const b1 = await c.sessions.send(b, { content: 'b1' });
  assert.equal(b1.status, 'queued');
  assert.equal(b1.queueReason, 'host_capacity');
  assert.equal((await c.sessions.send(a, { content: 'a2' })).status, 'queued');
  end((await startOf('a1')).runId);
  const nb = await startOf('b1'); // b waited longer than a's next message
  await sleep(150);
  assert.deepEqual(starts.map((s) => s.prompt), ['a1', 'b1'], 'capacity 1: a2 waits for b1');
  end(nb.runId);
  end((await startOf('a2')).runId);
  assert.deepEqual(starts.map((s) => s.prompt), ['a1', 'b1', 'a2']);
});

test('nothing starts at a run\'s end while the host\'s settings lease is held; the lease\'s end starts it', async () => {
  const { c, ids: [sid], hostId, starts, end, startOf } = await setup(1, 1);
  assert.equal((await c.sessions.send(sid, { content: 'l1' })).status, 'processing');
  const l2 = await c.sessions.send(sid, { content: 'l2' });
  assert.equal(l2.status, 'queued');
  const run = await startOf('l1');
  const conn = t.hub.ctx.em().getConnection();
  const status = async (taskId: string) => (await conn.execute(`select status from session_tasks where id = ?`, [taskId]))[0]?.status;
  // The scheduler's timer for the lease's end, caught as it is planned (nothing else here plans one of an hour):
  // the test ends the lease, not the clock, so no stall of this machine decides what the claim sees.
  const planned: Array<() => void> = [];
  const realSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
    const timer = realSetTimeout(fn, ms, ...rest);
    if ((ms ?? 0) >= 30 * 60_000) planned.push(() => (clearTimeout(timer), fn(...rest)));
    return timer;
  }) as typeof setTimeout;
  try {
    await conn.execute(`update hosts set settings_until = now() + interval '1 hour' where id = ?`, [hostId]);
    end(run.runId);
    await eventually(async () => (await status(run.runId)) !== 'running' || undefined, 5000, 10);
    await eventually(async () => planned.length > 0 || undefined, 5000, 10);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(await status(l2.taskId), 'queued', 'held while the lease lasts');
  assert.deepEqual(starts.map((s) => s.prompt), ['l1'], 'held while the lease lasts');
  // The lease's holder died: once the lease is over, the scheduler's timer drains the host.
  await conn.execute(`update hosts set settings_until = now() - interval '1 second' where id = ?`, [hostId]);
  for (const fire of planned) fire();
  await startOf('l2');
});
