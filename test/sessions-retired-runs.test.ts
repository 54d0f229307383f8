// A run whose end is written keeps no run state on its node: only what a late frame needs of it
// (its host, the write's chain) stays a minute. A busy node ends thousands of runs a minute, and a
// whole state held that long was most of the heap bench/dispatch left behind (bench/RESULTS.md,
// sixteenth session).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

test('an ended run leaves its state at once; the minute after, it is still known and a late run.end from its host still counts; then it is gone', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'retire');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const { runs } = t.hub.runFrames;
  const uc = t.client(u.key);
  const agent = await agentWhenReady(uc, { name: 'retire', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const size0 = runs.size;

  const c = (await uc.sessions.create({ agentId: agent.id, content: 'hi' })) as AcceptedRun;
  const start: any = await host.next((f) => f.t === 'run.start');
  assert.equal(runs.size, size0 + 1, 'a running run has its state');
  // Aborted by its user: the host's usage comes after the end is written.
  await uc.sessions.abort(c.sessionId);
  await host.next((f) => f.t === 'run.abort');
  await eventually(async () => (await uc.sessions.get(c.sessionId)).status === 'active', 10_000, 25);
  await eventually(async () => runs.size === size0, 5_000, 10);
  assert.equal(runs.heardFrom(start.runId), true, 'its run.start is not sent again');
  assert.equal(runs.isLocal(start.runId), true);

  host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 7, outputTokens: 3 } });
  const tokens = async () => (await t.hub.ctx.em().getConnection().execute(`select input_tokens from session_tasks where id = ?`, [start.runId]))[0];
  await eventually(async () => Number((await tokens()).input_tokens) === 7, 10_000, 25);
  assert.equal(runs.size, size0, 'the late usage made no state');
  // A run.start sent again for it (by another node) does not bring its state back: its frames stay a closed run's.
  runs.tracked({ id: start.runId, sessionId: c.sessionId, hostId, agentId: agent.id, engine: 'claude-code' });
  assert.equal(runs.size, size0, 'a closed run is not tracked again');

  // A minute on, the sweep lets it go.
  (runs as unknown as { retired: { sweep(now: number): void } }).retired.sweep(Date.now() + 61_000);
  assert.equal(runs.isLocal(start.runId), false);
  assert.equal(runs.heardFrom(start.runId), false);
});
