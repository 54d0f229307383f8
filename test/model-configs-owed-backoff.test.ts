// Settings a host owes (an unanswered or failed command: model-configs-unanswered.test.ts) are sent again
// when it is next online or idle. Every delivery holds the host's settings lease, during which no run
// starts there, up to the command's deadline when the host stays silent: a host that never answers
// (an old or broken agent-host) was sent the command again after every run, and every message that
// followed a run waited out the deadline. After a failed delivery or an unanswered apply, idles retry
// only after a growing delay (OWED_RETRY_MIN_MS, doubling up to OWED_RETRY_MAX_MS); a hello, an apply
// or an edit of the configuration still sends at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
const open: FakeHost[] = [];
before(async () => {
  // The settings command's deadline is the heartbeat window: 3 s.
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000 } as any);
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

test('a host that never answers settings is not sent them again at every idle: messages after a run start at once', { timeout: 60_000 }, async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const h = await connectFakeHost(t, credential, { capacity: 1, answer: () => undefined }); // silent to every request
  open.push(h);
  const settings = () => h.frames.filter((f) => f.t === 'settings.apply').length;
  const agent = await agentWhenReady(c, { name: 'silent-settings', hostId, engine: 'claude-code' });
  const mc = await c.modelConfigs.create({ name: 'm', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-owed-backoff-0123456789', modelName: 'm1' });
  await assert.rejects(c.hosts.applyModelConfig(hostId, mc.id), apiError(409));
  assert.equal(settings(), 1);

  /** One turn: its message, the run.start (timed from the send), the host's end. */
  const turn = async (sessionId: string | undefined, i: number) => {
    const t0 = performance.now();
    const r = (sessionId ? await c.sessions.send(sessionId, { content: `job ${i}` }) : await c.sessions.create({ agentId: agent.id, content: `job ${i}` })) as AcceptedRun;
    await h.next((f) => f.t === 'run.start' && (f as any).runId === r.taskId, 10_000);
    const waited = performance.now() - t0;
    h.send({ t: 'run.end', runId: r.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => ((await c.sessions.get(r.sessionId)).status !== 'processing' ? true : undefined), 5000, 20);
    return { sessionId: r.sessionId, status: r.status, queueReason: r.queueReason, waited };
  };

  // The apply went unanswered: the host is silent, so idles do not send it what it owes (a revert) at once.
  let sid: string | undefined;
  for (let i = 0; i <= 3; i++) {
    const r = await turn(sid, i);
    sid = r.sessionId;
    // Started by its own accept, not queued behind a settings write's lease (a wait for the host's 3-s answer):
    // the hub's decision, which no slowness of this machine changes.
    assert.deepEqual([r.status, r.queueReason], ['processing', undefined], `turn ${i} started at once (waited ${Math.round(r.waited)} ms)`);
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settings(), 1, 'no settings command after each idle');

  // A hello still sends at once (a restarted agent-host may answer now).
  h.close();
  await h.closed;
  const back = await connectFakeHost(t, credential, { capacity: 1 });
  open.push(back);
  const f = await back.next((x) => x.t === 'settings.apply', 10_000);
  assert.equal((f as any).config, null, 'the revert it owes');
});
