// A settings write must never overlap a run (hole 15): the lease is taken only when no task of the
// host is running. An aborted run's task ends at once, but its engine stops on the host later (SIGINT,
// then SIGKILL after the host's grace) and keeps its slot until the host reports it gone
// (`engine_until`). The lease did not look at those: an apply right after an abort wrote the host's
// settings while the aborted engine was still running there. It now answers 409 (host busy) until the
// host's run.end, or until ENGINE_STOP_GRACE_MS has passed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
const open: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ engineStopGraceMs: 10_000, rateLimitModelTestPerMinute: 0 } as any);
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

test('an apply while an aborted engine is still stopping is refused (409); once the host reports it gone, it goes through', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const h = await connectFakeHost(t, credential, { capacity: 2 });
  open.push(h);
  const agent = await agentWhenReady(c, { name: 'stopper', hostId, engine: 'claude-code' });
  const mc = await c.modelConfigs.create({ name: 'm', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-stopping-engine-0123456789', modelName: 'm1' });

  const run = (await c.sessions.create({ agentId: agent.id, content: 'long job' })) as AcceptedRun;
  await h.next((f) => f.t === 'run.start' && (f as any).runId === run.taskId);
  await c.sessions.abort(run.sessionId);
  await h.next((f) => f.t === 'run.abort' && (f as any).runId === run.taskId);

  await assert.rejects(c.hosts.applyModelConfig(hostId, mc.id), apiError(409, '4095'));
  assert.ok(!h.frames.some((f) => f.t === 'settings.apply'), 'nothing was written on the host');

  h.send({ t: 'run.end', runId: run.taskId, ok: false, aborted: true });
  await eventually(async () => {
    const [r] = await t.hub.ctx.em().getConnection().execute(`select engine_until from session_tasks where id = ?`, [run.taskId]);
    return r.engine_until === null ? true : undefined;
  }, 5000, 20);
  await c.hosts.applyModelConfig(hostId, mc.id);
  assert.ok(h.frames.some((f) => f.t === 'settings.apply'));
});
