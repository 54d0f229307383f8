// Sessions over real HTTP with an in-process host (protocol client): the API
// shapes, validation, isolation, idempotency, the queue rule, SSE frames,
// abort, host loss, history and cost. The fake host plays the engine's frames.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { openSse } from './helpers/sse.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

interface Setup {
  user: { id: string; key: string };
  credential: string;
  host: FakeHost;
  hostId: string;
  agentId: string;
  /** `/api/v1/sessions` */
  S: string;
}

async function setup(capacity = 1, workDir = 'proj'): Promise<Setup> {
  const user = await t.user();
  const { hostId, credential } = await pairHost(t, user.key);
  const host = await connectFakeHost(t, credential, { capacity });
  // The host's engines reach its record shortly after hello.
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: user.key, body: { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir } });
    return r.status === 201 ? r : undefined;
  }, 5000, 20);
  return { user, credential, host, hostId, agentId: a.body.data.id, S: '/api/v1/sessions' };
}

/** The engine session id the fake host reports (Claude Code's are UUIDs; the hub drops anything else). */
const ENGINE_SESSION = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const runStarts = (h: FakeHost) => h.frames.filter((f) => f.t === 'run.start') as any[];
const nextStart = (h: FakeHost, n: number) => eventually(async () => runStarts(h)[n], 5000, 10);

/** Plays one engine turn on the fake host. */
function play(h: FakeHost, runId: string, opts: { text?: string; tools?: boolean; usage?: { inputTokens: number; outputTokens: number }; model?: string } = {}) {
  const text = opts.text ?? 'hello there';
  h.send({ t: 'run.init', runId, engineSessionId: ENGINE_SESSION, model: opts.model ?? 'claude-test-9' });
  h.send({ t: 'run.delta', runId, text: text.slice(0, 5) });
  h.send({ t: 'run.delta', runId, text: text.slice(5) });
  if (opts.tools) {
    h.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Bash', toolId: 'tu_1', toolInput: { command: 'ls' } }] });
    h.send({ t: 'run.message', runId, role: 'user', blocks: [{ kind: 'tool_result', toolId: 'tu_1', toolResult: { content: 'a.txt', isError: false } }] });
  }
  h.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: text }] });
  h.send({ t: 'run.end', runId, ok: true, usage: opts.usage ?? { inputTokens: 10, outputTokens: 4 }, engineSessionId: ENGINE_SESSION, model: opts.model ?? 'claude-test-9' });
}

async function waitStatus(s: Setup, id: string, status: string) {
  return eventually(async () => {
    const r = await t.api('GET', `${s.S}/${id}`, { token: s.user.key });
    return r.body.data.status === status ? r.body.data : undefined;
  }, 5000, 20);
}

test('create without content → 201 envelope; read, list, patch, delete; isolation is 404', async () => {
  const s = await setup();
  const c = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'first', mode: 'plan' } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.code, '0');
  const ses = c.body.data;
  for (const k of ['id', 'title', 'agentId', 'agentName', 'status', 'updatedAt']) assert.ok(k in ses, k);
  assert.equal(ses.status, 'active');
  assert.equal(ses.mode, 'plan');
  assert.equal(ses.effort, 'default');
  assert.equal(ses.agentName, 'helper');
  assert.equal(ses.group, '今天');
  assert.equal(ses.messageCount, 0);
  assert.equal(ses.pendingRuns, 0);
  assert.equal(ses.processing, false);

  const other = await t.user();
  for (const [m, p, body] of [['GET', `/${ses.id}`], ['PATCH', `/${ses.id}`, { title: 'x' }], ['DELETE', `/${ses.id}`], ['GET', `/${ses.id}/messages`], ['POST', `/${ses.id}/messages`, { content: 'hi' }], ['POST', `/${ses.id}/abort`], ['GET', `/${ses.id}/cost`], ['GET', `/${ses.id}/queue`]] as const) {
    const r = await t.api(m, s.S + p, { token: other.key, body });
    assert.equal(r.status, 404, `${m} ${p}: ${r.text}`);
    assert.equal(r.body.data, null);
  }
  assert.equal((await t.api('GET', `${s.S}?agentId=${encodeURIComponent(s.agentId)}`, { token: other.key })).body.data.total, 0);
  // Another user's private agent is not visible → 404.
  assert.equal((await t.api('POST', s.S, { token: other.key, body: { agentId: s.agentId } })).status, 404);
  assert.equal((await t.api('POST', s.S, { token: s.user.key, body: { agentId: 'nobody/none' } })).status, 404);

  const p = await t.api('PATCH', `${s.S}/${ses.id}`, { token: s.user.key, body: { title: 'renamed', effort: 'high' } });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.data.title, 'renamed');
  assert.equal(p.body.data.effort, 'high');
  assert.equal(p.body.data.mode, 'plan');
  assert.equal((await t.api('PATCH', `${s.S}/${ses.id}`, { token: s.user.key, body: { model: 'x' } })).status, 400);
  assert.equal((await t.api('PATCH', `${s.S}/${ses.id}`, { token: s.user.key, body: { mode: 'yolo' } })).status, 400);

  const l = await t.api('GET', `${s.S}?keyword=renam`, { token: s.user.key });
  assert.equal(l.body.data.total, 1);
  assert.equal(l.body.data.items[0].id, ses.id);
  assert.equal((await t.api('GET', `${s.S}?q=nomatch`, { token: s.user.key })).body.data.total, 0);

  const d = await t.api('DELETE', `${s.S}/${ses.id}`, { token: s.user.key });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body.data, { deleted: true });
  assert.equal((await t.api('GET', `${s.S}/${ses.id}`, { token: s.user.key })).status, 404);
  assert.equal((await t.api('POST', `${s.S}/${ses.id}/messages`, { token: s.user.key, body: { content: 'x' } })).status, 404);
  s.host.close();
});

test('validation: model, extra fields, content bounds, Content-Type, page sizes, cursors, idempotency-key shape', async () => {
  const s = await setup();
  const k = s.user.key;
  const bad = async (m: string, p: string, opts: any) => {
    const r = await t.api(m, p, { token: k, ...opts });
    assert.equal(r.status, 400, `${m} ${p} ${JSON.stringify(opts)} → ${r.status} ${r.text}`);
    assert.notEqual(r.body.code, '0');
  };
  await bad('POST', s.S, { body: { agentId: s.agentId, model: 'opus' } });
  await bad('POST', s.S, { body: { agentId: s.agentId, extra: 1 } });
  await bad('POST', s.S, { body: { agentId: '' } });
  await bad('POST', s.S, { body: { agentId: s.agentId, content: '' } });
  await bad('POST', s.S, { body: { agentId: s.agentId, content: 'x'.repeat(100_001) } });
  await bad('POST', s.S, { body: { agentId: s.agentId, mode: 'yolo' } });
  await bad('POST', s.S, { body: { agentId: s.agentId, content: 'x', options: { permissionMode: 'nope' } } });
  await bad('POST', s.S, { body: { agentId: s.agentId, content: 'x', options: { model: 'opus' } } });
  await bad('POST', s.S, { raw: JSON.stringify({ agentId: s.agentId }), headers: { 'content-type': 'text/plain' } });
  await bad('POST', s.S, { body: { agentId: s.agentId }, headers: { 'idempotency-key': 'has space' } });
  await bad('POST', s.S, { body: { agentId: s.agentId }, headers: { 'idempotency-key': 'k'.repeat(129) } });
  await bad('GET', `${s.S}?pageSize=51`, {});
  await bad('GET', `${s.S}?sort=title`, {});
  const ses = (await t.api('POST', s.S, { token: k, body: { agentId: s.agentId } })).body.data;
  await bad('POST', `${s.S}/${ses.id}/messages`, { body: { content: 'x', model: 'opus' } });
  await bad('POST', `${s.S}/${ses.id}/messages`, { body: {} });
  await bad('POST', `${s.S}/${ses.id}/messages`, { raw: '{"content":"x"}', headers: { 'content-type': 'text/plain' } });
  await bad('GET', `${s.S}/${ses.id}/messages?before=a&after=b`, {});
  await bad('GET', `${s.S}/${ses.id}/messages?limit=0`, {});
  await bad('GET', `${s.S}/${ses.id}/messages?limit=51`, {});
  await bad('GET', `${s.S}/${ses.id}?messageLimit=51`, {});
  // A disabled agent cannot be used → 400.
  const dis = await t.api('PATCH', `/api/v1/agents/${encodeURIComponent(s.agentId)}`, { token: k, body: { enable: false } });
  assert.equal(dis.status, 200, dis.text);
  await bad('POST', s.S, { body: { agentId: s.agentId } });
  s.host.close();
});

test('idempotency-key: same key and body replays the first answer and creates nothing; another body → 409', async () => {
  const s = await setup();
  const h = { 'idempotency-key': 'create-1' };
  const a = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'once' }, headers: h });
  const b = await t.api('POST', s.S, { token: s.user.key, body: { title: 'once', agentId: s.agentId }, headers: h });
  assert.equal(a.status, 201);
  assert.equal(b.status, 201);
  assert.equal(b.body.data.id, a.body.data.id);
  const c = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'other' }, headers: h });
  assert.equal(c.status, 409);
  assert.equal((await t.api('GET', s.S, { token: s.user.key })).body.data.total, 1);
  // With content: one message, one run.
  const h2 = { 'idempotency-key': 'create-2' };
  const m1 = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, content: 'go' }, headers: h2 });
  const m2 = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, content: 'go' }, headers: h2 });
  assert.equal(m1.status, 202, m1.text);
  assert.deepEqual(m2.body, m1.body);
  assert.equal(m1.body.code, undefined, 'the 202 is not enveloped');
  await nextStart(s.host, 0);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(runStarts(s.host).length, 1);
  assert.equal((await t.api('GET', s.S, { token: s.user.key })).body.data.total, 2);
  // The same key for another user is independent.
  const other = await t.user();
  assert.equal((await t.api('POST', s.S, { token: other.key, body: { agentId: s.agentId, title: 'once' }, headers: h })).status, 404);
  s.host.close();
});

test('a turn: 202 processing, run.start to the host, normalized history, model, cost, agent counters', async () => {
  const s = await setup(1, 'proj/sub');
  const c = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, content: 'list files', mode: 'accept-edits', effort: 'high' } });
  assert.equal(c.status, 202, c.text);
  assert.equal(c.body.status, 'processing');
  const sid = c.body.sessionId;
  const start = await nextStart(s.host, 0);
  assert.equal(start.sessionId, sid);
  assert.equal(start.prompt, 'list files');
  assert.equal(start.workDir, 'proj/sub');
  assert.equal(start.mode, 'accept-edits');
  assert.equal(start.effort, 'high');
  assert.equal(start.engine, 'claude-code');
  assert.equal(start.resume, undefined);
  assert.equal((await t.api('GET', `${s.S}/${sid}`, { token: s.user.key })).body.data.status, 'processing');
  play(s.host, start.runId, { tools: true, usage: { inputTokens: 100, outputTokens: 30 } });
  const done = await waitStatus(s, sid, 'active');
  assert.equal(done.model, 'claude-test-9');
  assert.equal(done.lastMessage, 'hello there');
  assert.equal(done.messageCount, 4);
  assert.equal(done.unread, 1);

  const h = await t.api('GET', `${s.S}/${sid}/messages`, { token: s.user.key });
  assert.equal(h.status, 200);
  const items = h.body.data.items;
  assert.deepEqual(items.map((m: any) => [m.role, m.kind]), [['user', 'text'], ['assistant', 'tool_use'], ['user', 'tool_result'], ['assistant', 'text']]);
  assert.equal(items[1].seq, items[2].seq);
  assert.equal(items[1].toolId, 'tu_1');
  assert.equal(items[2].toolId, 'tu_1');
  assert.deepEqual(items[1].toolInput, { command: 'ls' });
  assert.equal(items[1].toolName, 'Bash');
  assert.deepEqual(items[2].toolResult, { content: 'a.txt', isError: false });
  assert.ok(items[3].seq > items[1].seq && items[1].seq > items[0].seq);
  for (const m of items) {
    assert.equal(m.sessionId, sid);
    assert.equal(m.provider, 'claude-code');
    assert.ok(!Number.isNaN(Date.parse(m.timestamp)));
  }
  assert.equal(h.body.data.total, 4);
  assert.equal(h.body.data.hasMore, false);
  assert.equal(h.body.data.firstId, items[0].id);
  assert.equal(h.body.data.lastId, items[3].id);
  assert.equal((await t.api('GET', `${s.S}/${sid}`, { token: s.user.key })).body.data.unread, 0, 'reading clears unread');

  // Cursors.
  const p1 = await t.api('GET', `${s.S}/${sid}/messages?limit=2`, { token: s.user.key });
  assert.deepEqual(p1.body.data.items.map((m: any) => m.id), [items[2].id, items[3].id]);
  assert.equal(p1.body.data.hasMore, true);
  const p0 = await t.api('GET', `${s.S}/${sid}/messages?limit=2&before=${p1.body.data.firstId}`, { token: s.user.key });
  assert.deepEqual(p0.body.data.items.map((m: any) => m.id), [items[0].id, items[1].id]);
  assert.equal(p0.body.data.hasMore, false);
  const pa = await t.api('GET', `${s.S}/${sid}/messages?limit=1&after=${items[0].id}`, { token: s.user.key });
  assert.deepEqual(pa.body.data.items.map((m: any) => m.id), [items[1].id]);
  assert.equal(pa.body.data.hasMore, true);
  const withMsgs = await t.api('GET', `${s.S}/${sid}?includeMessages=true&messageLimit=3`, { token: s.user.key });
  assert.equal(withMsgs.body.data.messages.length, 3);
  assert.equal((await t.api('GET', `${s.S}/${sid}`, { token: s.user.key })).body.data.messages, undefined);

  // Second turn resumes the engine session; options override the run only.
  const m2 = await t.api('POST', `${s.S}/${sid}/messages`, { token: s.user.key, body: { content: 'again', options: { permissionMode: 'plan', effort: 'low' } } });
  assert.equal(m2.status, 202);
  const start2 = await nextStart(s.host, 1);
  assert.equal(start2.resume, ENGINE_SESSION);
  assert.equal(start2.mode, 'plan');
  assert.equal(start2.effort, 'low');
  play(s.host, start2.runId, { usage: { inputTokens: 7, outputTokens: 3 } });
  await waitStatus(s, sid, 'active');
  assert.equal((await t.api('GET', `${s.S}/${sid}`, { token: s.user.key })).body.data.mode, 'accept-edits', 'the override did not stick');

  const cost = await t.api('GET', `${s.S}/${sid}/cost`, { token: s.user.key });
  assert.deepEqual(cost.body.data, { model: 'claude-test-9', messageCount: 6, inputTokens: 107, outputTokens: 33, totalTokens: 140, cost: 107 + 33 * 2 });

  const agent = await eventually(async () => {
    const r = await t.api('GET', `/api/v1/agents/${encodeURIComponent(s.agentId)}/manage`, { token: s.user.key });
    return r.body.data.runs === 2 ? r.body.data : undefined;
  });
  assert.equal(agent.sessionCount, 1);
  assert.equal(agent.cost, 107 + 33 * 2);
  assert.equal(agent.modelName, 'claude-test-9');
  assert.ok(agent.lastUsedAt > 0);
  s.host.close();
});

test('queue: session_busy and host_capacity, order kept, automatic start, 11th → 409, list and cancel', async () => {
  const s = await setup(1);
  const k = s.user.key;
  const a = (await t.api('POST', s.S, { token: k, body: { agentId: s.agentId, content: 'A1' } })).body;
  assert.equal(a.status, 'processing');
  const runA1 = (await nextStart(s.host, 0)).runId;
  // Another session on the same host (capacity 1) waits for the host.
  const b = (await t.api('POST', s.S, { token: k, body: { agentId: s.agentId, content: 'B1' } })).body;
  assert.equal(b.status, 'queued');
  assert.equal(b.queueReason, 'host_capacity');
  assert.ok(b.taskId);
  assert.equal((await t.api('GET', `${s.S}/${b.sessionId}`, { token: k })).body.data.status, 'queued');
  // The running session's next messages wait for the session.
  const queued: any[] = [];
  for (let i = 2; i <= 11; i++) {
    const r = await t.api('POST', `${s.S}/${a.sessionId}/messages`, { token: k, body: { content: `A${i}` } });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.status, 'queued');
    assert.equal(r.body.queueReason, 'session_busy');
    queued.push(r.body);
  }
  const full = await t.api('POST', `${s.S}/${a.sessionId}/messages`, { token: k, body: { content: 'A12' } });
  assert.equal(full.status, 409);
  assert.equal(full.body.code, '4093');
  const sa = (await t.api('GET', `${s.S}/${a.sessionId}`, { token: k })).body.data;
  assert.equal(sa.pendingRuns, 10);
  assert.equal(sa.processing, true);
  const q = await t.api('GET', `${s.S}/${a.sessionId}/queue`, { token: k });
  assert.equal(q.body.data.total, 10);
  assert.deepEqual(q.body.data.items.map((i: any) => i.content), ['A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11']);
  // Cancel A3 without stopping A1.
  const cancel = await t.api('DELETE', `${s.S}/${a.sessionId}/queue/${queued[1].taskId}`, { token: k });
  assert.equal(cancel.status, 200, cancel.text);
  assert.equal((await t.api('DELETE', `${s.S}/${a.sessionId}/queue/${queued[1].taskId}`, { token: k })).status, 404);
  assert.equal((await t.api('GET', `${s.S}/${a.sessionId}/queue`, { token: k })).body.data.total, 9);
  assert.equal(runStarts(s.host).length, 1);

  // A1 ends → the oldest waiting task on the host starts by itself: B1 (queued before A2).
  play(s.host, runA1);
  const next = await nextStart(s.host, 1);
  assert.equal(next.prompt, 'B1');
  assert.equal(next.sessionId, b.sessionId);
  play(s.host, next.runId);
  const n3 = await nextStart(s.host, 2);
  assert.equal(n3.prompt, 'A2');
  play(s.host, n3.runId);
  const n4 = await nextStart(s.host, 3);
  assert.equal(n4.prompt, 'A4', 'the cancelled A3 never runs');
  s.host.close();
});

test('SSE on POST: accepted, snapshot, deltas, tools, run.completed, each with id, sessionId and status; resume with Last-Event-ID', async () => {
  const s = await setup(1);
  const sse = await openSse(t.url + s.S, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.user.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: s.agentId, content: 'stream please' }),
  });
  assert.equal(sse.status, 200, sse.text);
  const start = await nextStart(s.host, 0);
  play(s.host, start.runId, { tools: true, text: 'streamed!' });
  await sse.ended;
  const names = sse.frames.map((f) => f.event);
  assert.deepEqual(names, ['accepted', 'snapshot', 'message.delta', 'message.delta', 'tool.started', 'tool.completed', 'run.completed']);
  for (const f of sse.frames) {
    assert.ok(f.id, 'every frame has an id');
    assert.equal(f.data.sessionId, start.sessionId);
    assert.equal(typeof f.data.status, 'string');
  }
  assert.equal(sse.frames.map((f) => f.data.delta).filter(Boolean).join(''), 'streamed!');
  assert.equal(sse.frames[4].data.toolName, 'Bash');
  assert.deepEqual([sse.frames[5].data.toolName, sse.frames[5].data.isError], ['Bash', false]);
  assert.equal(sse.frames[6].data.status, 'completed');

  // Second turn on the messages endpoint; the reader leaves mid-turn and resumes with Last-Event-ID.
  const sid = start.sessionId;
  const s2 = await openSse(`${t.url}${s.S}/${sid}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.user.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ content: 'more' }),
  });
  assert.equal(s2.status, 200);
  const st2 = await nextStart(s.host, 1);
  s.host.send({ t: 'run.delta', runId: st2.runId, text: 'one ' });
  const d1 = await s2.until((f) => f.event === 'message.delta');
  s2.close();
  s.host.send({ t: 'run.delta', runId: st2.runId, text: 'two ' });
  s.host.send({ t: 'run.delta', runId: st2.runId, text: 'three' });
  await new Promise((r) => setTimeout(r, 100));
  const resumed = await openSse(`${t.url}${s.S}/${sid}/events`, { headers: { authorization: `Bearer ${s.user.key}`, 'last-event-id': d1.id! } });
  assert.equal(resumed.status, 200);
  await resumed.until((f) => f.event === 'message.delta' && f.data.delta === 'three');
  s.host.send({ t: 'run.message', runId: st2.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'one two three' }] });
  s.host.send({ t: 'run.end', runId: st2.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await resumed.ended;
  assert.deepEqual(resumed.frames.map((f) => f.event), ['snapshot', 'message.delta', 'message.delta', 'run.completed']);
  assert.deepEqual(resumed.frames.slice(1, 3).map((f) => f.data.delta), ['two ', 'three']);
  // The disconnected reader lost nothing: the answer is in the history.
  const h = await t.api('GET', `${s.S}/${sid}/messages`, { token: s.user.key });
  assert.equal(h.body.data.items.at(-1).content, 'one two three');

  // Queued + SSE requested → JSON 202, never a stream.
  const busy = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, content: 'keeps the host busy' } });
  assert.equal(busy.body.status, 'processing');
  const q = await openSse(t.url + s.S, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.user.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: s.agentId, content: 'must wait' }),
  });
  assert.equal(q.status, 202);
  assert.equal(JSON.parse(q.text!).status, 'queued');
  s.host.close();
});

test('abort: host told to stop, waiting messages discarded, partial output kept as interrupted, session active; idempotent', async () => {
  const s = await setup(1);
  const k = s.user.key;
  const idle = (await t.api('POST', s.S, { token: k, body: { agentId: s.agentId } })).body.data;
  const ab0 = await t.api('POST', `${s.S}/${idle.id}/abort`, { token: k });
  assert.equal(ab0.status, 200);
  assert.deepEqual(ab0.body.data, { sessionId: idle.id, status: 'aborted' });

  const a = (await t.api('POST', s.S, { token: k, body: { agentId: s.agentId, content: 'long job' } })).body;
  const start = await nextStart(s.host, 0);
  for (const c of ['w1', 'w2', 'w3']) await t.api('POST', `${s.S}/${a.sessionId}/messages`, { token: k, body: { content: c } });
  s.host.send({ t: 'run.delta', runId: start.runId, text: 'partial ans' });
  await new Promise((r) => setTimeout(r, 50));
  const ab = await t.api('POST', `${s.S}/${a.sessionId}/abort`, { token: k });
  assert.equal(ab.status, 200);
  assert.deepEqual(ab.body.data, { sessionId: a.sessionId, status: 'aborted' });
  const abortFrame: any = await s.host.next((f) => f.t === 'run.abort');
  assert.equal(abortFrame.runId, start.runId);
  const ses = (await t.api('GET', `${s.S}/${a.sessionId}`, { token: k })).body.data;
  assert.equal(ses.status, 'active');
  assert.equal(ses.pendingRuns, 0);
  assert.equal((await t.api('GET', `${s.S}/${a.sessionId}/queue`, { token: k })).body.data.total, 0);
  const h = (await t.api('GET', `${s.S}/${a.sessionId}/messages`, { token: k })).body.data.items;
  assert.deepEqual(h.map((m: any) => [m.role, m.content]), [['user', 'long job'], ['assistant', 'partial ans']]);
  assert.equal(h[1].interrupted, true);
  // The host's own end of the run arrives later; nothing else starts from the discarded queue.
  s.host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 5, outputTokens: 1 } });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(runStarts(s.host).length, 1);
  assert.equal((await t.api('POST', `${s.S}/${a.sessionId}/abort`, { token: k })).status, 200);
  // Usable again.
  const again = await t.api('POST', `${s.S}/${a.sessionId}/messages`, { token: k, body: { content: 'next' } });
  assert.equal(again.body.status, 'processing');
  assert.equal((await nextStart(s.host, 1)).prompt, 'next');
  s.host.close();
});

test('engine failure and host loss end the turn with run.error; the session stays usable; offline host → 503, nothing kept', async () => {
  const s = await setup(1);
  const k = s.user.key;
  const sse = await openSse(t.url + s.S, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: s.agentId, content: 'fail please' }),
  });
  const st = await nextStart(s.host, 0);
  s.host.send({ t: 'run.end', runId: st.runId, ok: false, error: { code: 'ENGINE_FAILED', message: 'engine exited with code 3' } });
  await sse.ended;
  const err = sse.frames.at(-1)!;
  assert.equal(err.event, 'run.error');
  assert.equal(err.data.code, 'ENGINE_FAILED');
  assert.match(err.data.message, /code 3/);
  const sid = st.sessionId;
  await waitStatus(s, sid, 'active');

  // Host drops mid-run with a message waiting.
  const s2 = await openSse(`${t.url}${s.S}/${sid}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ content: 'will be cut' }),
  });
  await nextStart(s.host, 1);
  await t.api('POST', `${s.S}/${sid}/messages`, { token: k, body: { content: 'waits for the host' } });
  s.host.ws.terminate();
  await s2.ended;
  assert.equal(s2.frames.at(-1)!.event, 'run.error');
  assert.equal(s2.frames.at(-1)!.data.code, 'HOST_DISCONNECTED');
  const after = await waitStatus(s, sid, 'queued');
  assert.equal(after.pendingRuns, 1);
  const before = after.messageCount;
  const off = await t.api('POST', `${s.S}/${sid}/messages`, { token: k, body: { content: 'offline' } });
  assert.equal(off.status, 503);
  assert.equal((await t.api('GET', `${s.S}/${sid}`, { token: k })).body.data.messageCount, before, 'a 503 keeps nothing');
  // The host comes back: the waiting message starts by itself.
  const back = await connectFakeHost(t, s.credential, { capacity: 1 });
  const resumed: any = await back.next((f) => f.t === 'run.start');
  assert.equal(resumed.prompt, 'waits for the host');
  back.send({ t: 'run.end', runId: resumed.runId, ok: true });
  await waitStatus(s, sid, 'active');
  back.close();
});
