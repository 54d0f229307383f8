// The client's SSE reader (src/client/sse.ts): the text/event-stream framing,
// and followSession against a real hub stream — typed events, a queued
// message, a refused one, and a network drop mid-turn (a proxy cuts every
// connection) after which the reader resumes with Last-Event-ID and every
// delta arrives exactly once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { startCutProxy, type CutProxy } from './helpers/cut-proxy.js';
import { ApiError } from '../src/client/index.js';
import { SseParser, readFrames, followSession, type SessionStreamEvent, type FollowState } from '../src/client/sse.js';

test('parser: frames, comments, multi-line data, ids, retry, CRLF and CR line ends', () => {
  const p = new SseParser();
  const frames = p.push(': stream open\n\nid: r:1\nevent: message.delta\ndata: {"a":1}\n\n: heartbeat\r\n\r\nevent: x\r\ndata: one\r\ndata:two\r\nretry: 500\r\n\r\ndata: plain\r\rid\nevent: y\ndata\n\n');
  assert.deepEqual(frames, [
    { id: 'r:1', event: 'message.delta', data: '{"a":1}' },
    { event: 'x', data: 'one\ntwo', retry: 500 },
    { event: 'message', data: 'plain' },
    { id: '', event: 'y', data: '' },
  ]);
});

test('parser: the same frames whatever the chunk boundaries (even between CR and LF)', () => {
  const text = 'id: r:1\r\nevent: message.delta\r\ndata: {"delta":"héllo"}\r\n\r\n: hb\n\nid: r:2\revent: run.completed\rdata: {}\r\r';
  const whole = new SseParser().push(text);
  assert.equal(whole.length, 2);
  for (let size = 1; size <= 7; size++) {
    const p = new SseParser();
    const got = [];
    for (let i = 0; i < text.length; i += size) got.push(...p.push(text.slice(i, i + size)));
    assert.deepEqual(got, whole, `chunks of ${size}`);
  }
});

test('readFrames: bytes split inside a UTF-8 character; an unfinished last frame is dropped', async () => {
  const bytes = new TextEncoder().encode('event: a\ndata: "ü€"\n\nevent: b\ndata: cut');
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.slice(i, i + 3));
      c.close();
    },
  });
  const got = [];
  for await (const f of readFrames(body)) got.push(f);
  assert.deepEqual(got, [{ event: 'a', data: '"ü€"' }]);
});

let t: TestHub;
let proxy: CutProxy;
let user: { id: string; key: string };
let host: FakeHost;
let agentId: string;
const S = '/api/v1/sessions';

before(async () => {
  t = await startTestHub();
  proxy = await startCutProxy(t.hub.port);
  user = await t.user();
  const { hostId, credential } = await pairHost(t, user.key);
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: user.key, body: { name: 'sse-client', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' } });
    return r.status === 201 ? r : undefined;
  }, 5000, 20);
  agentId = a.body.data.id;
});
after(async () => {
  host.close();
  await proxy.close();
  await t.close();
});

const runStarts = () => host.frames.filter((f) => f.t === 'run.start') as any[];
const nextStart = (n: number) => eventually(async () => runStarts()[n], 5000, 10);
const newSession = async () => (await t.api('POST', S, { token: user.key, body: { agentId } })).body.data.id as string;
/** Collects a follow's events; `waitFor` resolves when one matches. */
function collector() {
  const events: SessionStreamEvent[] = [];
  const states: FollowState[] = [];
  const waiting: Array<[(e: SessionStreamEvent) => boolean, () => void]> = [];
  return {
    events,
    states,
    onEvent(e: SessionStreamEvent) {
      events.push(e);
      for (const w of waiting.filter(([p]) => p(e))) (waiting.splice(waiting.indexOf(w), 1), w[1]());
    },
    onState: (s: FollowState) => void states.push(s),
    waitFor: (p: (e: SessionStreamEvent) => boolean) => new Promise<void>((r) => (events.some(p) ? r() : waiting.push([p, r]))),
    deltas: () => events.flatMap((e) => (e.event === 'message.delta' ? [e.data.delta] : [])),
  };
}
let startsSeen = 0;
const end = (runId: string) => host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 2, outputTokens: 3 } });

test('follow: sends the message and streams its turn, typed, to its end', async () => {
  const sid = await newSession();
  const c = collector();
  const f = followSession({ baseUrl: t.url, token: user.key, sessionId: sid, send: { content: 'hi' }, onEvent: c.onEvent, onState: c.onState });
  const { runId } = await nextStart(startsSeen++);
  host.send({ t: 'run.delta', runId, text: 'Hel' });
  host.send({ t: 'run.delta', runId, text: 'lo' });
  host.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'tool_use', toolName: 'Bash', toolId: 'tu_1', toolInput: { command: 'ls' } }] });
  host.send({ t: 'run.message', runId, role: 'user', blocks: [{ kind: 'tool_result', toolId: 'tu_1', toolResult: { content: 'a', isError: false } }] });
  end(runId);
  const r = await f.done;
  assert.equal(r.reason, 'completed');
  assert.equal(r.reconnects, 0);
  assert.deepEqual(c.events.map((e) => e.event), ['accepted', 'snapshot', 'message.delta', 'message.delta', 'tool.started', 'tool.completed', 'run.completed']);
  assert.equal(c.deltas().join(''), 'Hello');
  const tool = c.events.find((e) => e.event === 'tool.completed');
  assert.ok(tool?.event === 'tool.completed' && tool.data.toolName === 'Bash' && tool.data.isError === false);
  assert.equal(f.lastEventId, c.events.at(-1)!.id);
  assert.deepEqual(c.states.map((s) => s.state), ['connecting', 'open']);
});

test('follow: a message that must wait answers queued (the 202 body); a refused one is an ApiError', async () => {
  const sid = await newSession();
  const c = collector();
  const first = followSession({ baseUrl: t.url, token: user.key, sessionId: sid, send: { content: 'first' }, onEvent: c.onEvent });
  const { runId } = await nextStart(startsSeen++);
  await c.waitFor((e) => e.event === 'accepted');
  const second = await followSession({ baseUrl: t.url, token: user.key, sessionId: sid, send: { content: 'second' }, onEvent: () => assert.fail('a queued message has no stream') }).done;
  assert.equal(second.reason, 'queued');
  assert.equal(second.accepted?.status, 'queued');
  assert.equal(second.accepted?.queueReason, 'session_busy');
  await assert.rejects(followSession({ baseUrl: t.url, token: user.key, sessionId: 'ses_nope', send: { content: 'x' }, onEvent: () => {} }).done,
    (e: unknown) => e instanceof ApiError && e.status === 404);
  await assert.rejects(followSession({ baseUrl: t.url, token: 'ahk_wrong', sessionId: sid, onEvent: () => {} }).done,
    (e: unknown) => e instanceof ApiError && e.status === 401);
  end(runId);
  assert.equal((await first.done).reason, 'completed');
  // The queued one starts by itself: following the session picks its turn up from the start.
  const { runId: run2 } = await nextStart(startsSeen++);
  host.send({ t: 'run.delta', runId: run2, text: 'queued ' });
  const c2 = collector();
  const f2 = followSession({ baseUrl: t.url, token: user.key, sessionId: sid, onEvent: c2.onEvent });
  await c2.waitFor((e) => e.event === 'message.delta');
  host.send({ t: 'run.delta', runId: run2, text: 'answer' });
  end(run2);
  assert.equal((await f2.done).reason, 'completed');
  assert.equal(c2.deltas().join(''), 'queued answer');
  assert.equal(c2.events[0].event, 'snapshot');
  // Nothing running now: following says so and ends.
  assert.equal((await followSession({ baseUrl: t.url, token: user.key, sessionId: sid, onEvent: () => {} }).done).reason, 'no-run');
});

test('follow: the network drops mid-turn; the reader reconnects with Last-Event-ID and no delta is lost or doubled', async () => {
  const sid = await newSession();
  const c = collector();
  const f = followSession({ baseUrl: proxy.url, token: user.key, sessionId: sid, send: { content: 'long answer' }, onEvent: c.onEvent, onState: c.onState, minDelayMs: 50 });
  const { runId } = await nextStart(startsSeen++);
  host.send({ t: 'run.delta', runId, text: 'one ' });
  await c.waitFor((e) => e.event === 'message.delta');
  const idBeforeDrop = f.lastEventId;
  assert.ok(proxy.cut() >= 1, 'the stream went through the proxy');
  // Deltas while the reader is away: the hub's ring keeps them for the resume.
  host.send({ t: 'run.delta', runId, text: 'two ' });
  host.send({ t: 'run.delta', runId, text: 'three ' });
  await eventually(async () => c.states.some((s) => s.state === 'reconnecting'));
  host.send({ t: 'run.delta', runId, text: 'four' });
  end(runId);
  const r = await f.done;
  assert.equal(r.reason, 'completed');
  assert.ok(r.reconnects >= 1, `reconnected (${r.reconnects})`);
  assert.equal(r.gap, false, 'everything was replayed');
  assert.equal(c.deltas().join(''), 'one two three four');
  const ids = c.events.filter((e) => e.event !== 'snapshot').map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'no event twice');
  assert.ok(idBeforeDrop && ids.indexOf(idBeforeDrop) >= 0);
  assert.ok(c.states.some((s) => s.state === 'reconnecting' && s.delayMs === 50));
});

test('follow: drops again and again: the delay grows, then the reader gives up when told to', async () => {
  const sid = await newSession();
  const c = collector();
  const f = followSession({ baseUrl: proxy.url, token: user.key, sessionId: sid, send: { content: 'flaky' }, onEvent: c.onEvent, onState: c.onState, minDelayMs: 20, maxDelayMs: 60, maxAttempts: 3 });
  const { runId } = await nextStart(startsSeen++);
  host.send({ t: 'run.delta', runId, text: 'x' });
  await c.waitFor((e) => e.event === 'message.delta');
  await proxy.close(); // nothing listens any more: every reconnect fails
  const r = await f.done;
  assert.equal(r.reason, 'gave-up');
  assert.deepEqual(c.states.filter((s) => s.state === 'reconnecting').map((s) => (s as { delayMs: number }).delayMs), [20, 40, 60]);
  end(runId);
  // The host runs one turn at a time: the next test's message must find this end written, or it waits (202 queued).
  await eventually(async () => (await t.api('GET', `${S}/${sid}`, { token: user.key })).body.data.status === 'active' || undefined, 5000, 10);
  proxy = await startCutProxy(t.hub.port);
});

test('follow: a connection silent for idleMs is taken as dead and resumed; nothing is lost', async () => {
  const sid = await newSession();
  const c = collector();
  const f = followSession({ baseUrl: t.url, token: user.key, sessionId: sid, send: { content: 'quiet' }, onEvent: c.onEvent, onState: c.onState, minDelayMs: 20, idleMs: 300 });
  const { runId } = await nextStart(startsSeen++);
  host.send({ t: 'run.delta', runId, text: 'before ' });
  await c.waitFor((e) => e.event === 'message.delta');
  // The engine says nothing for longer than idleMs: the reader opens the stream again.
  await eventually(async () => c.states.some((s) => s.state === 'reconnecting'), 10_000, 20);
  host.send({ t: 'run.delta', runId, text: 'after' });
  end(runId);
  const r = await f.done;
  assert.equal(r.reason, 'completed');
  assert.ok(r.reconnects >= 1);
  assert.equal(c.deltas().join(''), 'before after');
});
