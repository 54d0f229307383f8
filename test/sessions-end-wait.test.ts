// A message sent while its session's run is over on the host but the run's
// end is still being written waits for that write (bounded, END_WAIT_MS in
// src/sessions/messaging.ts) and starts at once, rather than queueing behind
// a run that has ended. A write held longer leaves the message to queue as
// before; the end then starts it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t?.close();
});

/** Holds each run end's write until `release` is called; `entered` counts the writes begun. */
function holdEndWrites(hub: TestHub): { entered: () => number; release: () => void } {
  const writer = (hub.hub.runFrames.runs as any).endWriter;
  const write = writer.write.bind(writer);
  let entered = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  writer.write = async (item: unknown) => {
    entered++;
    await gate;
    return write(item);
  };
  return { entered: () => entered, release: () => open() };
}

test('a message sent while its session\'s run end is written starts at once; a write held longer leaves it queued, then started', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: 2 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'end-wait', scope: 'private', hostId, engine: 'claude-code' });
  const sid = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;
  const startOf = (prompt: string) => host!.next((f: any) => f.t === 'run.start' && f.prompt === prompt);

  // 1. The end write takes a moment (well under the bound): the next message waits for it and runs.
  let hold = holdEndWrites(t);
  const s1 = startOf('m1');
  assert.equal((await c.sessions.send(sid, { content: 'm1' })).status, 'processing');
  const r1: any = await s1;
  host.send({ t: 'run.end', runId: r1.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => hold.entered() > 0 || undefined, 5000, 5);
  const s2 = startOf('m2');
  // Released as the send starts its wait (not on a timer running since the request left): the write then has
  // the whole END_WAIT_MS, however long the request took to reach the hub.
  const runs = t.hub.runFrames.runs;
  const endOf = runs.endOf.bind(runs);
  runs.endOf = (sessionId: string) => {
    const ending = endOf(sessionId);
    if (sessionId === sid && ending) hold.release();
    return ending;
  };
  let a2;
  try {
    a2 = await c.sessions.send(sid, { content: 'm2' });
  } finally {
    runs.endOf = endOf;
  }
  assert.equal(a2.status, 'processing', 'the run had ended: m2 is not queued behind it');
  assert.equal(a2.queueReason, undefined);
  const r2: any = await s2;

  // 2. The end write is held past the bound: the message is answered queued, and the end starts it.
  hold = holdEndWrites(t);
  host.send({ t: 'run.end', runId: r2.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => hold.entered() > 0 || undefined, 5000, 5);
  const s3 = startOf('m3');
  const a3 = await c.sessions.send(sid, { content: 'm3' });
  assert.equal(a3.status, 'queued', 'answered without waiting for the held write');
  assert.equal(a3.queueReason, 'session_busy');
  hold.release();
  const r3: any = await s3;
  assert.notEqual(r3.runId, r2.runId);
  host.send({ t: 'run.end', runId: r3.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  const hist = await eventually(async () => {
    const m = await c.sessions.messages(sid);
    const users = m.items.filter((x: any) => x.role === 'user').map((x: any) => x.content);
    return users.length === 3 ? users : undefined;
  }, 5000, 20);
  assert.deepEqual(hist, ['m1', 'm2', 'm3'], 'each stored once, in the order sent');
});
