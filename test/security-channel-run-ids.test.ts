// A host's channel remembers the runs it may speak for (channel-runs.ts): each run.start adds its id, and
// only the host's run.end takes it away. A run the hub ends itself (an abort whose engine the host never
// reports gone, after ENGINE_STOP_GRACE_MS) stays on the channel for as long as the channel lives: a host
// that answers no abort, with an account looping send/abort, grew the node's memory by an id per run for
// good (about 100 a second at capacity 1,000). Now a channel holding many more ids than its capacity
// forgets those the database no longer holds open (aborted over ten minutes ago, or ended), and keeps the
// runs still open: their frames pass as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ engineStopGraceMs: 0 } as any);
});
after(() => t.close());

test('send/abort loops on a host that never ends its aborted runs: the channel keeps the open runs, not every id', async () => {
  const owner = await t.user();
  const c = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key, 'silent');
  const host = await connectFakeHost(t, credential, { capacity: 2 });
  const agent = await agentWhenReady(c, { name: 'silent', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  // One run stays open throughout (a long turn), on the other slot.
  const long = (await c.sessions.create({ agentId: agent.id, content: 'a long turn' })) as AcceptedRun;
  await host.next((f) => f.t === 'run.start' && (f as any).runId === long.taskId);
  const loop = (await c.sessions.create({ agentId: agent.id, content: 'job 0' })) as AcceptedRun;
  await host.next((f) => f.t === 'run.start' && (f as any).runId === loop.taskId);
  const ROUNDS = 80; // past capacity + 64 ids
  for (let i = 1; i <= ROUNDS; i++) {
    await c.sessions.abort(loop.sessionId); // the host answers no abort: the hub ends the run itself
    const next = await c.sessions.send(loop.sessionId, { content: `job ${i}` });
    await host.next((f) => f.t === 'run.start' && (f as any).runId === next.taskId);
  }
  // The aborted runs are ten minutes old, as far as the channel's resync can tell.
  await t.hub.ctx.em().getConnection().execute(`update session_tasks set engine_until = now() - interval '11 minutes' where status = 'aborted' and host_id = ?`, [hostId]);
  const conn = (t.hub.runFrames.gateway as any).local.get(hostId);
  conn.runsCheckedAt = 0; // and the channel's last question (while they were recent) more than RECHECK_MS ago
  await c.sessions.abort(loop.sessionId);
  const last = await c.sessions.send(loop.sessionId, { content: 'last' });
  await host.next((f) => f.t === 'run.start' && (f as any).runId === last.taskId);
  await eventually(async () => (conn.runs.size <= 64 ? true : undefined), 5000, 50).catch(() => undefined);
  assert.ok(conn.runs.size <= 64, `the channel holds ${conn.runs.size} run ids after ${ROUNDS + 2} runs on a capacity-2 host`);
  // The runs still open are its own: their frames pass.
  host.send({ t: 'run.message', runId: long.taskId, role: 'assistant', blocks: [{ kind: 'text', text: 'done' }] } as any);
  host.send({ t: 'run.end', runId: long.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } } as any);
  host.send({ t: 'run.end', runId: last.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } } as any);
  await eventually(async () => ((await c.sessions.get(long.sessionId)).status === 'active' ? true : undefined), 5000, 50);
  await eventually(async () => ((await c.sessions.get(loop.sessionId)).status === 'active' ? true : undefined), 5000, 50);
  host.close();
});
