// Sessions over real HTTP with an in-process host (protocol client): the API
// shapes, validation, isolation, idempotency, the queue rule, SSE frames,
// abort, host loss, history and cost. The fake host plays the engine's frames.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { apiError, failure } from './helpers/api-error.js';
import { followSession, type SessionStreamEvent } from '../src/client/sse.js';
import type { AcceptedRun, Client, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

interface Setup {
  user: { id: string; key: string };
  /** The typed client signed in as the user. */
  c: Client;
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
  const c = t.client(user.key);
  const a = await agentWhenReady(c, { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir });
  return { user, c, credential, host, hostId, agentId: a.id, S: '/api/v1/sessions' };
}

/** A session created without content (the 201). */
const made = (p: Promise<SessionView | AcceptedRun>) => p as Promise<SessionView>;
/** A message that started or queued a run (the plain 202). */
const accepted = (p: Promise<SessionView | AcceptedRun>) => p as Promise<AcceptedRun>;

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
    const ses = await s.c.sessions.get(id);
    return ses.status === status ? ses : undefined;
  }, 5000, 20);
}

test('create without content → 201 envelope; read, list, patch, delete; isolation is 404', async () => {
  const s = await setup();
  // Raw: checks the 201 envelope itself (code '0').
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
  const oc = t.client(other.key);
  // Raw: the 404 envelope (data null) on every route of another's session.
  for (const [m, p, body] of [['GET', `/${ses.id}`], ['PATCH', `/${ses.id}`, { title: 'x' }], ['DELETE', `/${ses.id}`], ['GET', `/${ses.id}/messages`], ['POST', `/${ses.id}/messages`, { content: 'hi' }], ['POST', `/${ses.id}/abort`], ['GET', `/${ses.id}/cost`], ['GET', `/${ses.id}/queue`]] as const) {
    const r = await t.api(m, s.S + p, { token: other.key, body });
    assert.equal(r.status, 404, `${m} ${p}: ${r.text}`);
    assert.equal(r.body.data, null);
  }
  assert.equal((await oc.sessions.list({ agentId: s.agentId })).total, 0);
  // Another user's private agent is not visible → 404.
  await assert.rejects(oc.sessions.create({ agentId: s.agentId }), apiError(404));
  await assert.rejects(s.c.sessions.create({ agentId: 'nobody/none' }), apiError(404));

  const p = await s.c.sessions.update(ses.id, { title: 'renamed', effort: 'high' });
  assert.equal(p.title, 'renamed');
  assert.equal(p.effort, 'high');
  assert.equal(p.mode, 'plan');
  // Fields outside the schema: the same JSON the raw call sent.
  await assert.rejects(s.c.sessions.update(ses.id, { model: 'x' } as any), apiError(400));
  await assert.rejects(s.c.sessions.update(ses.id, { mode: 'yolo' } as any), apiError(400));

  const l = await s.c.sessions.list({ keyword: 'renam' });
  assert.equal(l.total, 1);
  assert.equal(l.items[0].id, ses.id);
  assert.equal((await s.c.sessions.list({ q: 'nomatch' })).total, 0);

  assert.deepEqual(await s.c.sessions.remove(ses.id), { deleted: true });
  await assert.rejects(s.c.sessions.get(ses.id), apiError(404));
  await assert.rejects(s.c.sessions.send(ses.id, { content: 'x' }), apiError(404));
  s.host.close();
});

test('validation: model, extra fields, content bounds, Content-Type, page sizes, cursors, idempotency-key shape', async () => {
  const s = await setup();
  const k = s.user.key;
  const c = s.c;
  // A 400 with a business code (never the success code '0').
  const bad = async (p: Promise<unknown>, what: string) => {
    const e = await failure(p);
    assert.equal(e.status, 400, `${what} → ${e.status} ${e.code} ${e.message}`);
    assert.notEqual(e.code, '0');
  };
  // Raw: a body and headers outside what the client sends (text/plain, Idempotency-Key).
  const badRaw = async (m: string, p: string, opts: any) => {
    const r = await t.api(m, p, { token: k, ...opts });
    assert.equal(r.status, 400, `${m} ${p} ${JSON.stringify(opts)} → ${r.status} ${r.text}`);
    assert.notEqual(r.body.code, '0');
  };
  // Bodies and queries outside the typed shape are cast: the client sends the same JSON.
  await bad(c.sessions.create({ agentId: s.agentId, model: 'opus' } as any), 'model');
  await bad(c.sessions.create({ agentId: s.agentId, extra: 1 } as any), 'extra');
  await bad(c.sessions.create({ agentId: '' }), 'empty agentId');
  await bad(c.sessions.create({ agentId: s.agentId, content: '' }), 'empty content');
  await bad(c.sessions.create({ agentId: s.agentId, content: 'x'.repeat(100_001) }), 'long content');
  await bad(c.sessions.create({ agentId: s.agentId, mode: 'yolo' } as any), 'mode');
  await bad(c.sessions.create({ agentId: s.agentId, content: 'x', options: { permissionMode: 'nope' } } as any), 'permissionMode');
  await bad(c.sessions.create({ agentId: s.agentId, content: 'x', options: { model: 'opus' } } as any), 'options.model');
  await badRaw('POST', s.S, { raw: JSON.stringify({ agentId: s.agentId }), headers: { 'content-type': 'text/plain' } });
  await badRaw('POST', s.S, { body: { agentId: s.agentId }, headers: { 'idempotency-key': 'has space' } });
  await badRaw('POST', s.S, { body: { agentId: s.agentId }, headers: { 'idempotency-key': 'k'.repeat(129) } });
  await bad(c.sessions.list({ pageSize: 51 }), 'pageSize=51');
  await bad(c.sessions.list({ sort: 'title' } as any), 'sort=title');
  const ses = await made(c.sessions.create({ agentId: s.agentId }));
  await bad(c.sessions.send(ses.id, { content: 'x', model: 'opus' } as any), 'send model');
  await bad(c.sessions.send(ses.id, {} as any), 'send {}');
  await badRaw('POST', `${s.S}/${ses.id}/messages`, { raw: '{"content":"x"}', headers: { 'content-type': 'text/plain' } });
  await bad(c.sessions.messages(ses.id, { before: 'a', after: 'b' }), 'before and after');
  await bad(c.sessions.messages(ses.id, { limit: 0 }), 'limit=0');
  await bad(c.sessions.messages(ses.id, { limit: 51 }), 'limit=51');
  await bad(c.sessions.get(ses.id, { messageLimit: 51 }), 'messageLimit=51');
  // A disabled agent cannot be used → 400.
  await c.agents.update(s.agentId, { enable: false });
  await bad(c.sessions.create({ agentId: s.agentId }), 'disabled agent');
  s.host.close();
});

test('idempotency-key: same key and body replays the first answer and creates nothing; another body → 409', async () => {
  // Raw where the Idempotency-Key header is sent: the client has no such header.
  const s = await setup();
  const h = { 'idempotency-key': 'create-1' };
  const a = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'once' }, headers: h });
  const b = await t.api('POST', s.S, { token: s.user.key, body: { title: 'once', agentId: s.agentId }, headers: h });
  assert.equal(a.status, 201);
  assert.equal(b.status, 201);
  assert.equal(b.body.data.id, a.body.data.id);
  const c = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'other' }, headers: h });
  assert.equal(c.status, 409);
  assert.equal((await s.c.sessions.list()).total, 1);
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
  assert.equal((await s.c.sessions.list()).total, 2);
  // The same key for another user is independent.
  const other = await t.user();
  assert.equal((await t.api('POST', s.S, { token: other.key, body: { agentId: s.agentId, title: 'once' }, headers: h })).status, 404);
  // Records past the 24-hour window go at the user's next keyed creation, whatever their key (they were
  // deleted only when their own key came back, so a table of spent records grew for good).
  const db = t.hub.ctx.em().getConnection();
  await db.execute(`update session_idempotency set created_at = now() - interval '25 hours' where user_id = ? and key = 'create-1'`, [s.user.id]);
  await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'later' }, headers: { 'idempotency-key': 'create-3' } });
  const keys = (await db.execute(`select key from session_idempotency where user_id = ? order by key`, [s.user.id])).map((r: any) => r.key as string);
  assert.deepEqual(keys, ['create-2', 'create-3']);
  // A key past the window is fresh again: the same body creates anew instead of replaying.
  const later = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'later' }, headers: { 'idempotency-key': 'create-3' } });
  await db.execute(`update session_idempotency set created_at = now() - interval '25 hours' where user_id = ? and key = 'create-3'`, [s.user.id]);
  const anew = await t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'later' }, headers: { 'idempotency-key': 'create-3' } });
  assert.equal(anew.status, 201, anew.text);
  assert.notEqual(anew.body.data.id, later.body.data.id);
  // Ten requests with one key at once: one session, one answer for all.
  const burst = await Promise.all(Array.from({ length: 10 }, () =>
    t.api('POST', s.S, { token: s.user.key, body: { agentId: s.agentId, title: 'burst' }, headers: { 'idempotency-key': 'create-4' } })));
  assert.deepEqual(burst.map((r) => r.status), Array(10).fill(201), JSON.stringify(burst.map((r) => r.text)));
  assert.equal(new Set(burst.map((r) => r.body.data.id)).size, 1);
  assert.equal((await s.c.sessions.list({ keyword: 'burst' })).total, 1);
  s.host.close();
});

test('a turn: 202 processing, run.start to the host, normalized history, model, cost, agent counters', async () => {
  const s = await setup(1, 'proj/sub');
  const c = await accepted(s.c.sessions.create({ agentId: s.agentId, content: 'list files', mode: 'accept-edits', effort: 'high' }));
  assert.equal(c.status, 'processing');
  const sid = c.sessionId;
  const start = await nextStart(s.host, 0);
  assert.equal(start.sessionId, sid);
  assert.equal(start.prompt, 'list files');
  assert.equal(start.workDir, 'proj/sub');
  assert.equal(start.mode, 'accept-edits');
  assert.equal(start.effort, 'high');
  assert.equal(start.engine, 'claude-code');
  assert.equal(start.resume, undefined);
  assert.equal((await s.c.sessions.get(sid)).status, 'processing');
  play(s.host, start.runId, { tools: true, usage: { inputTokens: 100, outputTokens: 30 } });
  const done = await waitStatus(s, sid, 'active');
  assert.equal(done.model, 'claude-test-9');
  assert.equal(done.lastMessage, 'hello there');
  assert.equal(done.messageCount, 4);
  assert.equal(done.unread, 1);

  const h = await s.c.sessions.messages(sid);
  const items: any[] = h.items;
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
  assert.equal(h.total, 4);
  assert.equal(h.hasMore, false);
  assert.equal(h.firstId, items[0].id);
  assert.equal(h.lastId, items[3].id);
  assert.equal((await s.c.sessions.get(sid)).unread, 0, 'reading clears unread');

  // Cursors.
  const p1 = await s.c.sessions.messages(sid, { limit: 2 });
  assert.deepEqual(p1.items.map((m) => m.id), [items[2].id, items[3].id]);
  assert.equal(p1.hasMore, true);
  const p0 = await s.c.sessions.messages(sid, { limit: 2, before: p1.firstId! });
  assert.deepEqual(p0.items.map((m) => m.id), [items[0].id, items[1].id]);
  assert.equal(p0.hasMore, false);
  const pa = await s.c.sessions.messages(sid, { limit: 1, after: items[0].id });
  assert.deepEqual(pa.items.map((m) => m.id), [items[1].id]);
  assert.equal(pa.hasMore, true);
  const withMsgs = await s.c.sessions.get(sid, { includeMessages: true, messageLimit: 3 });
  assert.equal(withMsgs.messages!.length, 3);
  assert.equal((await s.c.sessions.get(sid)).messages, undefined);

  // Second turn resumes the engine session; options override the run only.
  await s.c.sessions.send(sid, { content: 'again', options: { permissionMode: 'plan', effort: 'low' } });
  const start2 = await nextStart(s.host, 1);
  assert.equal(start2.resume, ENGINE_SESSION);
  assert.equal(start2.mode, 'plan');
  assert.equal(start2.effort, 'low');
  play(s.host, start2.runId, { usage: { inputTokens: 7, outputTokens: 3 } });
  await waitStatus(s, sid, 'active');
  assert.equal((await s.c.sessions.get(sid)).mode, 'accept-edits', 'the override did not stick');

  const cost = await s.c.sessions.cost(sid);
  assert.deepEqual(cost, { model: 'claude-test-9', messageCount: 6, inputTokens: 107, outputTokens: 33, totalTokens: 140, cost: 107 + 33 * 2 });

  const agent = await eventually(async () => {
    const a = await s.c.agents.manage(s.agentId);
    return a.runs === 2 ? a : undefined;
  });
  assert.equal(agent.sessionCount, 1);
  assert.equal(agent.cost, 107 + 33 * 2);
  assert.equal(agent.modelName, 'claude-test-9');
  assert.ok((agent.lastUsedAt ?? 0) > 0);
  s.host.close();
});

test('queue: session_busy and host_capacity, order kept, automatic start, 11th → 409, list and cancel', async () => {
  const s = await setup(1);
  const c = s.c;
  const a = await accepted(c.sessions.create({ agentId: s.agentId, content: 'A1' }));
  assert.equal(a.status, 'processing');
  const runA1 = (await nextStart(s.host, 0)).runId;
  // Another session on the same host (capacity 1) waits for the host.
  const b = await accepted(c.sessions.create({ agentId: s.agentId, content: 'B1' }));
  assert.equal(b.status, 'queued');
  assert.equal(b.queueReason, 'host_capacity');
  assert.ok(b.taskId);
  assert.equal((await c.sessions.get(b.sessionId)).status, 'queued');
  // The running session's next messages wait for the session.
  const queued: AcceptedRun[] = [];
  for (let i = 2; i <= 11; i++) {
    const r = await c.sessions.send(a.sessionId, { content: `A${i}` });
    assert.equal(r.status, 'queued');
    assert.equal(r.queueReason, 'session_busy');
    queued.push(r);
  }
  await assert.rejects(c.sessions.send(a.sessionId, { content: 'A12' }), apiError(409, '4093'));
  const sa = await c.sessions.get(a.sessionId);
  assert.equal(sa.pendingRuns, 10);
  assert.equal(sa.processing, true);
  const q = await c.sessions.queue(a.sessionId);
  assert.equal(q.total, 10);
  assert.deepEqual(q.items.map((i) => i.content), ['A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11']);
  // Cancel A3 without stopping A1.
  assert.deepEqual(await c.chat.cancelQueued(a.sessionId, queued[1].taskId), { taskId: queued[1].taskId, cancelled: true });
  await assert.rejects(c.chat.cancelQueued(a.sessionId, queued[1].taskId), apiError(404));
  assert.equal((await c.sessions.queue(a.sessionId)).total, 9);
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
  // Raw streams: this test checks the frames on the wire (every id, the order, the Last-Event-ID header).
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
  const h = await s.c.sessions.messages(sid);
  assert.equal(h.items.at(-1)!.content, 'one two three');

  // Queued + SSE requested → JSON 202, never a stream.
  const busy = await accepted(s.c.sessions.create({ agentId: s.agentId, content: 'keeps the host busy' }));
  assert.equal(busy.status, 'processing');
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
  const c = s.c;
  const idle = await made(c.sessions.create({ agentId: s.agentId }));
  assert.deepEqual(await c.sessions.abort(idle.id), { sessionId: idle.id, status: 'aborted' });

  const a = await accepted(c.sessions.create({ agentId: s.agentId, content: 'long job' }));
  const start = await nextStart(s.host, 0);
  for (const w of ['w1', 'w2', 'w3']) await c.sessions.send(a.sessionId, { content: w });
  s.host.send({ t: 'run.delta', runId: start.runId, text: 'partial ans' });
  await s.host.ping(); // the hub has read the delta (kept as the partial text) before the pong
  assert.deepEqual(await c.sessions.abort(a.sessionId), { sessionId: a.sessionId, status: 'aborted' });
  const abortFrame: any = await s.host.next((f) => f.t === 'run.abort');
  assert.equal(abortFrame.runId, start.runId);
  const ses = await c.sessions.get(a.sessionId);
  assert.equal(ses.status, 'active');
  assert.equal(ses.pendingRuns, 0);
  assert.equal((await c.sessions.queue(a.sessionId)).total, 0);
  const h: any[] = (await c.sessions.messages(a.sessionId)).items;
  assert.deepEqual(h.map((m) => [m.role, m.content]), [['user', 'long job'], ['assistant', 'partial ans']]);
  assert.equal(h[1].interrupted, true);
  // The host's own end of the run arrives later; nothing else starts from the discarded queue.
  s.host.send({ t: 'run.end', runId: start.runId, ok: false, aborted: true, usage: { inputTokens: 5, outputTokens: 1 } });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(runStarts(s.host).length, 1);
  assert.deepEqual(await c.sessions.abort(a.sessionId), { sessionId: a.sessionId, status: 'aborted' });
  // Usable again.
  const again = await c.sessions.send(a.sessionId, { content: 'next' });
  assert.equal(again.status, 'processing');
  assert.equal((await nextStart(s.host, 1)).prompt, 'next');
  s.host.close();
});

test('engine failure and host loss end the turn with run.error; the session stays usable; offline host → 503, nothing kept', async () => {
  const s = await setup(1);
  const k = s.user.key;
  // Raw: the client streams a message to an existing session only, not a session's creation.
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

  // Host drops mid-run with a message waiting: the client follows the turn to its end.
  const events: SessionStreamEvent[] = [];
  const s2 = followSession({ baseUrl: t.url, token: k, sessionId: sid, send: { content: 'will be cut' }, onEvent: (e) => events.push(e) });
  await nextStart(s.host, 1);
  await s.c.sessions.send(sid, { content: 'waits for the host' });
  s.host.ws.terminate();
  const end = await s2.done;
  assert.equal(end.reason, 'error');
  assert.equal(events.at(-1)!.event, 'run.error');
  assert.equal((events.at(-1)!.data as any).code, 'HOST_DISCONNECTED');
  const after = await waitStatus(s, sid, 'queued');
  assert.equal(after.pendingRuns, 1);
  const before = after.messageCount;
  await assert.rejects(s.c.sessions.send(sid, { content: 'offline' }), apiError(503));
  assert.equal((await s.c.sessions.get(sid)).messageCount, before, 'a 503 keeps nothing');
  // The host comes back: the waiting message starts by itself.
  const back = await connectFakeHost(t, s.credential, { capacity: 1 });
  const resumed: any = await back.next((f) => f.t === 'run.start');
  assert.equal(resumed.prompt, 'waits for the host');
  back.send({ t: 'run.end', runId: resumed.runId, ok: true });
  await waitStatus(s, sid, 'active');
  back.close();
});
