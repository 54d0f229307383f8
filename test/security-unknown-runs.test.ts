// Issue 10, hole 5: run frames for runs the hub does not know (random ids, a
// run that already ended, a run of another host) cost no database query and
// leave nothing behind in memory: the channel's set of runs bound to it
// (hosts/channel-runs.ts) drops them before the sessions domain sees them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

test('frames for unknown runs: no query, no state, counted, the channel stays up', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'noisy');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const { gateway, runs } = t.hub.runFrames;
  // A real run of this host, ended: frames for it afterwards are unknown too.
  const uc = t.client(u.key);
  const agent = await agentWhenReady(uc, { name: 'noisy', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const c = (await uc.sessions.create({ agentId: agent.id, content: 'hi' })) as AcceptedRun;
  assert.ok(c.sessionId && c.taskId, 'a 202 with the run');
  const start: any = await host.next((f) => f.t === 'run.start');
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => (await uc.sessions.get(c.sessionId)).status === 'active', 10_000, 25);

  const loads0 = runs.loads;
  const dropped0 = gateway.droppedRunFrames;
  const size0 = runs.size;
  const N = 300;
  for (let i = 0; i < N; i++) {
    const runId = `run_${randomBytes(12).toString('hex')}`;
    host.send({ t: 'run.delta', runId, text: 'x'.repeat(100) });
    host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 5, outputTokens: 5 } });
  }
  host.send({ t: 'run.delta', runId: start.runId, text: 'after the end' });
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 9, outputTokens: 9 } });
  await host.ping(); // the hub has read every frame before the pong
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(runs.loads - loads0, 0, 'no database lookup for frames of unknown runs');
  assert.equal(runs.size, size0, 'no run state kept for unknown runs');
  assert.equal(gateway.droppedRunFrames - dropped0, 2 * N + 2, 'every such frame is dropped and counted');
  // The ended run's usage is what its own run.end said.
  const row = (await t.hub.ctx.em().getConnection().execute(`select input_tokens from session_tasks where id = ?`, [start.runId]))[0];
  assert.equal(Number(row.input_tokens), 1);
  assert.equal(host.ws.readyState, host.ws.OPEN, 'the channel stays up');
  assert.ok(await host.ping() >= 0);
});
