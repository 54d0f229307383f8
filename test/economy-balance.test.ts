// Issue 12, part 3: short of tokens. While the balance is ≤ 0, sending a
// message or opening a session with content → 429 with code 4091 and nothing
// stored; a message already waiting when the balance runs out is not started
// (it waits until the balance is positive again). The store and plans short
// of tokens answer 429 4091 too (test/billing*.test.ts).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 1_000 });
});
after(() => t.close());

const balance = async (key: string) => (await t.api('GET', '/api/v1/me/balance', { token: key })).body.data.balance as number;
const starts = (h: FakeHost) => h.frames.filter((f) => f.t === 'run.start') as any[];

async function setup() {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir: '' } });
    return r.status === 201 ? r : undefined;
  }, 5000, 20);
  return { u, host, agentId: a.body.data.id as string };
}

test('balance ≤ 0: sending and opening with content → 429 4091, nothing stored; without content a session still opens', async () => {
  const { u, host, agentId } = await setup();
  const first = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId, content: 'spend it all' } });
  assert.equal(first.status, 202, first.text);
  const sid = first.body.sessionId;
  const run = await eventually(async () => starts(host)[0], 5000, 10);
  host.send({ t: 'run.end', runId: run.runId, ok: true, usage: { inputTokens: 800, outputTokens: 100 } }); // cost 1000 → balance 0
  await eventually(async () => ((await balance(u.key)) === 0 ? true : undefined), 5000, 20);
  const before = (await t.api('GET', `/api/v1/sessions/${sid}`, { token: u.key })).body.data;

  const send = await t.api('POST', `/api/v1/sessions/${sid}/messages`, { token: u.key, body: { content: 'one more' } });
  assert.equal(send.status, 429, send.text);
  assert.equal(send.body.code, '4091');
  assert.equal(send.body.data, null);
  const sse = await t.api('POST', `/api/v1/sessions/${sid}/messages`, { token: u.key, body: { content: 'one more' }, headers: { accept: 'text/event-stream' } });
  assert.equal(sse.status, 429, 'a stream request is refused the same way');
  const after = (await t.api('GET', `/api/v1/sessions/${sid}`, { token: u.key })).body.data;
  assert.equal(after.messageCount, before.messageCount, 'nothing stored');
  assert.equal((await t.api('GET', `/api/v1/sessions/${sid}/queue`, { token: u.key })).body.data.total, 0);

  const listBefore = (await t.api('GET', '/api/v1/sessions', { token: u.key })).body.data.total;
  const open = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId, content: 'new one' } });
  assert.deepEqual([open.status, open.body.code], [429, '4091']);
  assert.equal((await t.api('GET', '/api/v1/sessions', { token: u.key })).body.data.total, listBefore, 'no session was created');
  const empty = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId } });
  assert.equal(empty.status, 201, 'opening a session without content costs nothing');
  assert.equal(starts(host).length, 1, 'no run was started');
  host.close();
});

test('a message waiting when the balance runs out is not started; it starts once the balance is positive again', async () => {
  const { u, host, agentId } = await setup();
  const a = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId, content: 'first' } });
  const b = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId, content: 'second' } });
  assert.equal(b.body.status, 'queued');
  assert.equal(b.body.queueReason, 'host_capacity');
  const run = await eventually(async () => starts(host)[0], 5000, 10);
  host.send({ t: 'run.end', runId: run.runId, ok: true, usage: { inputTokens: 2_000, outputTokens: 0 } }); // balance → -1000
  await eventually(async () => ((await balance(u.key)) === -1_000 ? true : undefined), 5000, 20);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(starts(host).length, 1, 'the waiting message was not started');
  const q = await t.api('GET', `/api/v1/sessions/${b.body.sessionId}/queue`, { token: u.key });
  assert.equal(q.body.data.total, 1, 'it still waits');
  // A top-up (an administrator's grant here); the host's next drain (here: the end of another run) starts it.
  assert.equal((await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: { qty: 2 } })).status, 200);
  assert.ok((await balance(u.key)) > 0);
  const c = await t.api('POST', `/api/v1/sessions/${a.body.sessionId}/messages`, { token: u.key, body: { content: 'third' } });
  assert.equal(c.status, 202, c.text);
  const third = await eventually(async () => starts(host)[1], 5000, 10);
  host.send({ t: 'run.end', runId: third.runId, ok: true, usage: { inputTokens: 1, outputTokens: 0 } });
  const next = await eventually(async () => starts(host)[2], 5000, 10);
  assert.equal(next.sessionId, b.body.sessionId, 'the message that waited starts');
  assert.equal(next.prompt, 'second');
  host.close();
});
