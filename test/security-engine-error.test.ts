// An engine's failure text comes from the owner's machine (its stderr, relayed
// by the host) and goes to whoever runs the agent — for a public agent, a
// stranger. What reaches the stranger (the run.error event) and what is kept
// (session_tasks.error_message) is scrubbed of credential-like strings and
// bounded, as the hub's own log line already was.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
let host: FakeHost;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t?.close();
});

test("an engine's error text is scrubbed and bounded before a session's user sees or the hub keeps it", async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'leaky');
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const uc = t.client(u.key);
  const agent = await agentWhenReady(uc, { name: 'leaky', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const c = (await uc.sessions.create({ agentId: agent.id })) as SessionView;
  assert.equal(c.status, 'active', 'the 201 of a session without content');
  const sid = c.id;
  // Raw: the streamed send (Accept: text/event-stream) is read frame by frame.
  const sse = await openSse(`${t.url}/api/v1/sessions/${sid}/messages`, {
    method: 'POST', headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ content: 'go' }),
  });
  const start: any = await host.next((f) => f.t === 'run.start');
  const key = 'sk-ant-api03-' + 'Q7x9'.repeat(20);
  const message = `401 Unauthorized: invalid x-api-key ${key} (Authorization: Bearer abcDEF123456ghiJKL789) ` + 'z '.repeat(1500);
  host.send({ t: 'run.end', runId: start.runId, ok: false, error: { code: 'ENGINE_FAILED', message }, usage: { inputTokens: 1, outputTokens: 0 } });
  const ev = await sse.until((f) => f.event === 'run.error');
  sse.close();
  assert.ok(!ev.data.message.includes('Q7x9Q7x9'), `the key reached the user: ${ev.data.message.slice(0, 120)}`);
  assert.ok(!ev.data.message.includes('abcDEF123456'), 'the bearer token reached the user');
  assert.ok(ev.data.message.length <= 500, `unbounded: ${ev.data.message.length}`);
  const row = await eventually(async () => (await t.hub.ctx.em().getConnection().execute(`select error_message from session_tasks where id = ?`, [start.runId]))[0]?.error_message);
  assert.ok(!row.includes('Q7x9Q7x9') && row.length <= 500, 'what is kept is scrubbed and bounded too');
});
