// Issue 12, part 3: short of tokens. While the balance is ≤ 0, sending a
// message or opening a session with content → 429 with code 4091 and nothing
// stored; a message already waiting when the balance runs out is not started
// (it waits until the balance is positive again). The store and plans short
// of tokens answer 429 4091 too (test/billing*.test.ts).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 1_000 });
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
const starts = (h: FakeHost) => h.frames.filter((f) => f.t === 'run.start') as any[];

async function setup() {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await agentWhenReady(t.client(u.key), { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir: '' });
  return { u, c: t.client(u.key), host, agentId: a.id };
}

/** The plain 202 of a session opened with a first message (not the 201 of a bare session). */
function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r, `a run accepted, got ${JSON.stringify(r)}`);
  return r;
}

test('balance ≤ 0: sending and opening with content → 429 4091, nothing stored; without content a session still opens', async () => {
  const { u, c, host, agentId } = await setup();
  const sid = accepted(await c.sessions.create({ agentId, content: 'spend it all' })).sessionId;
  const run = await eventually(async () => starts(host)[0], 5000, 10);
  host.send({ t: 'run.end', runId: run.runId, ok: true, usage: { inputTokens: 800, outputTokens: 100 } }); // cost 1000 → balance 0
  await eventually(async () => ((await balance(u.key)) === 0 ? true : undefined), 5000, 20);
  const before = await c.sessions.get(sid);

  await assert.rejects(c.sessions.send(sid, { content: 'one more' }), apiError(429, '4091'));
  // The refusal's envelope (data null) and a stream request (Accept: text/event-stream) are HTTP-level: raw.
  const send = await t.api('POST', `/api/v1/sessions/${sid}/messages`, { token: u.key, body: { content: 'one more' } });
  assert.equal(send.status, 429, send.text);
  assert.equal(send.body.code, '4091');
  assert.equal(send.body.data, null);
  const sse = await t.api('POST', `/api/v1/sessions/${sid}/messages`, { token: u.key, body: { content: 'one more' }, headers: { accept: 'text/event-stream' } });
  assert.equal(sse.status, 429, 'a stream request is refused the same way');
  const after = await c.sessions.get(sid);
  assert.equal(after.messageCount, before.messageCount, 'nothing stored');
  assert.equal((await c.sessions.queue(sid)).total, 0);

  const listBefore = (await c.sessions.list()).total;
  await assert.rejects(c.sessions.create({ agentId, content: 'new one' }), apiError(429, '4091'));
  assert.equal((await c.sessions.list()).total, listBefore, 'no session was created');
  const empty = await c.sessions.create({ agentId });
  assert.ok('id' in empty, 'opening a session without content costs nothing (a 201 session)');
  assert.equal(starts(host).length, 1, 'no run was started');
  host.close();
});

test('a message waiting when the balance runs out is not started; it starts once the balance is positive again', async () => {
  const { u, c: cu, host, agentId } = await setup();
  const a = accepted(await cu.sessions.create({ agentId, content: 'first' }));
  const b = accepted(await cu.sessions.create({ agentId, content: 'second' }));
  assert.equal(b.status, 'queued');
  assert.equal(b.queueReason, 'host_capacity');
  const run = await eventually(async () => starts(host)[0], 5000, 10);
  host.send({ t: 'run.end', runId: run.runId, ok: true, usage: { inputTokens: 2_000, outputTokens: 0 } }); // balance → -1000
  await eventually(async () => ((await balance(u.key)) === -1_000 ? true : undefined), 5000, 20);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(starts(host).length, 1, 'the waiting message was not started');
  const q = await cu.sessions.queue(b.sessionId);
  assert.equal(q.total, 1, 'it still waits');
  // A top-up (an administrator's grant here); the host's next drain (here: the end of another run) starts it.
  assert.equal((await t.admin.admin.grantTokens(u.id, 2)).qty, 2);
  assert.ok((await balance(u.key)) > 0);
  accepted(await cu.sessions.send(a.sessionId, { content: 'third' }));
  const third = await eventually(async () => starts(host)[1], 5000, 10);
  host.send({ t: 'run.end', runId: third.runId, ok: true, usage: { inputTokens: 1, outputTokens: 0 } });
  const next = await eventually(async () => starts(host)[2], 5000, 10);
  assert.equal(next.sessionId, b.sessionId, 'the message that waited starts');
  assert.equal(next.prompt, 'second');
  host.close();
});
