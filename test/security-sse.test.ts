// Issue 10, hole 6: SSE streams cost the hub nothing once their client is
// gone. A client that disconnects before or while its stream starts leaves no
// subscription behind (counted on the hub, and in Redis itself with PUBSUB
// when the bus is Redis), on each of the three entry points; a reader that
// stops reading is dropped after SSE_BUFFER_BYTES instead of growing the hub's
// memory; an account holds at most SSE_MAX_STREAMS_PER_ACCOUNT open streams.
// Runs on PostgreSQL + Redis (DATABASE_URL and REDIS_URL set) and on PGlite
// with the in-process bus.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Redis } from 'ioredis';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import type { AcceptedRun, Client, SessionView } from '../src/client/index.js';

const redis = process.env.DATABASE_URL ? await redisUrlOrSkip() : undefined;
const redisUrl = redis && 'url' in redis ? redis.url : undefined;
const prefix = testPrefix();
const BUFFER = 1024 * 1024;
const CAP = 3;

let t: TestHub;
let rc: Redis | undefined;
before(async () => {
  t = await startTestHub({ redisUrl, redisPrefix: prefix, sseBufferBytes: BUFFER, sseMaxStreamsPerAccount: CAP, runOutputMaxBytes: 64 * 1024 * 1024 }); // one run streams more than the default per-run bound
  if (redisUrl) rc = new Redis(redisUrl);
});
after(async () => {
  rc?.disconnect();
  await t.close();
});

interface Setup {
  user: { id: string; key: string };
  /** The typed client signed in as the user. */
  c: Client;
  host: FakeHost;
  agentId: string;
}

async function setup(): Promise<Setup> {
  const user = await t.user();
  const { hostId, credential } = await pairHost(t, user.key);
  const host = await connectFakeHost(t, credential, { capacity: 50 });
  const c = t.client(user.key);
  const a = await agentWhenReady(c, { name: 'helper', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' });
  return { user, c, host, agentId: a.id };
}

/** Subscriptions to session topics: the hub's own count and, with Redis, the channels Redis holds for this hub. */
async function subscriptions(): Promise<{ hub: number; redis: number }> {
  const channels = rc ? ((await rc.pubsub('CHANNELS', `${prefix}session:*`)) as string[]) : [];
  return { hub: t.hub.sse.subscriptions(), redis: channels.length };
}

async function settlesAt(base: { hub: number; redis: number }, what: string): Promise<void> {
  let last = await subscriptions();
  try {
    await eventually(async () => {
      last = await subscriptions();
      return last.hub === base.hub && last.redis === base.redis ? true : undefined;
    }, 5000, 50);
  } catch {
    assert.deepEqual(last, base, `${what}: subscriptions left behind`);
  }
}

/**
 * Sends one request on a raw socket. `leave`: 'sent' closes the socket as soon as the
 * request is written (the handler is still working); 'first-byte' closes it when the
 * first bytes of the answer arrive (the stream is starting).
 */
function rawRequest(method: string, path: string, key: string, body: unknown, leave: 'sent' | 'first-byte'): Promise<void> {
  const u = new URL(t.url);
  const payload = body === undefined ? '' : JSON.stringify(body);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${u.host}`, `Authorization: Bearer ${key}`, 'Accept: text/event-stream'];
  if (payload) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(payload)}`);
  return new Promise((resolve) => {
    const c = net.connect(Number(u.port), u.hostname, () => {
      c.write(head.join('\r\n') + '\r\n\r\n' + payload, () => {
        if (leave === 'sent') c.destroy();
      });
    });
    c.on('data', () => c.destroy());
    c.on('error', () => undefined);
    c.on('close', () => resolve());
  });
}

/** A session whose turn is running on the fake host (its stream stays open). */
async function runningSession(s: Setup): Promise<string> {
  const id = ((await s.c.sessions.create({ agentId: s.agentId, content: 'work' })) as AcceptedRun).sessionId;
  assert.ok(id, 'a 202 with the run');
  await s.host.next((f: any) => f.t === 'run.start' && f.sessionId === id);
  return id;
}

async function idleSession(s: Setup): Promise<string> {
  const ses = (await s.c.sessions.create({ agentId: s.agentId })) as SessionView;
  assert.equal(ses.status, 'active', 'the 201 of a session without content');
  return ses.id;
}

for (const leave of ['sent', 'first-byte'] as const) {
  const when = leave === 'sent' ? 'before' : 'while';
  test(`a client leaving ${when} the stream starts leaves no subscription: GET /events, POST /messages, POST /sessions (bus: ${redisUrl ? 'redis' : 'local'})`, async () => {
    const s = await setup();
    const base = await subscriptions();
    for (let i = 0; i < 5; i++) {
      const sid = await runningSession(s);
      await rawRequest('GET', `/api/v1/sessions/${sid}/events`, s.user.key, undefined, leave);
    }
    await settlesAt(base, 'GET /events');
    for (let i = 0; i < 5; i++) {
      const sid = await idleSession(s);
      await rawRequest('POST', `/api/v1/sessions/${sid}/messages`, s.user.key, { content: 'hi' }, leave);
    }
    await settlesAt(base, 'POST /messages');
    for (let i = 0; i < 5; i++) await rawRequest('POST', '/api/v1/sessions', s.user.key, { agentId: s.agentId, content: 'hi' }, leave);
    await settlesAt(base, 'POST /sessions');
    assert.equal(t.hub.sse.streams(), 0, 'no stream is counted open');
    s.host.close();
  });
}

test('a reader that stops reading is dropped after SSE_BUFFER_BYTES; the hub buffers no more; other readers get everything', async () => {
  const s = await setup();
  const sid = await runningSession(s);
  const start: any = s.host.frames.find((f: any) => f.t === 'run.start' && f.sessionId === sid);
  const base = await subscriptions();

  // The stalled reader: a raw socket that never reads.
  const u = new URL(t.url);
  const stalled = net.connect(Number(u.port), u.hostname);
  stalled.pause();
  stalled.write(`GET /api/v1/sessions/${sid}/events HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${s.user.key}\r\nAccept: text/event-stream\r\n\r\n`);
  const stalledClosed = new Promise<void>((r) => stalled.on('close', () => r()));
  stalled.on('error', () => undefined);
  const good = await openSse(`${t.url}/api/v1/sessions/${sid}/events`, { headers: { authorization: `Bearer ${s.user.key}` } });
  assert.equal(good.status, 200);
  await eventually(async () => (t.hub.sse.streams() === 2 ? true : undefined), 5000, 20);

  // Far more than the loopback socket buffers (a few MiB) plus SSE_BUFFER_BYTES.
  const chunk = 'x'.repeat(32 * 1024);
  const N = 400; // 12.5 MiB
  let maxBuffered = 0;
  s.host.send({ t: 'run.init', runId: start.runId, engineSessionId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', model: 'claude-test-9' });
  for (let i = 0; i < N; i++) {
    s.host.send({ t: 'run.delta', runId: start.runId, text: chunk });
    if (i % 10 === 9) {
      await new Promise((r) => setTimeout(r, 20));
      maxBuffered = Math.max(maxBuffered, t.hub.sse.bufferedBytes());
    }
  }
  await good.until((f) => f.event === 'message.delta' && good.frames.filter((g) => g.event === 'message.delta').length === N, 30_000);
  maxBuffered = Math.max(maxBuffered, t.hub.sse.bufferedBytes());
  assert.ok(maxBuffered <= BUFFER + chunk.length * 2, `the hub held at most about SSE_BUFFER_BYTES for the stalled reader (held ${maxBuffered})`);
  // The stalled stream is gone: one stream left, its subscription released.
  await eventually(async () => (t.hub.sse.streams() === 1 ? true : undefined), 10_000, 50);

  // The stalled client, reading at last, finds its stream cut short.
  let got = 0;
  stalled.on('data', (d) => (got += d.length));
  stalled.resume();
  await stalledClosed;
  assert.ok(got < N * chunk.length, `the stalled reader was cut (${got} bytes of ${N * chunk.length})`);

  s.host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await good.ended;
  assert.equal(good.frames.at(-1)?.event, 'run.completed');
  await settlesAt(base, 'after the run');
  s.host.close();
});

test(`an account holds at most SSE_MAX_STREAMS_PER_ACCOUNT (${CAP}) open streams: the next one is 429 (4296), sends nothing; a slot comes back when a stream closes`, async () => {
  const s = await setup();
  const sid = await runningSession(s);
  const open = [];
  for (let i = 0; i < CAP; i++) {
    const r = await openSse(`${t.url}/api/v1/sessions/${sid}/events`, { headers: { authorization: `Bearer ${s.user.key}` } });
    assert.equal(r.status, 200);
    open.push(r);
  }
  // Raw below: stream requests (Accept: text/event-stream), which the typed client does not make.
  const over = await t.api('GET', `/api/v1/sessions/${sid}/events`, { token: s.user.key });
  assert.equal(over.status, 429);
  assert.equal(over.body.code, '4296');

  // A streamed send over the cap is refused before the message is accepted.
  const idle = await idleSession(s);
  const starts = s.host.frames.filter((f) => f.t === 'run.start').length;
  const send = await t.api('POST', `/api/v1/sessions/${idle}/messages`, { token: s.user.key, headers: { accept: 'text/event-stream' }, body: { content: 'hi' } });
  assert.equal(send.status, 429);
  assert.equal(send.body.code, '4296');
  const create = await t.api('POST', '/api/v1/sessions', { token: s.user.key, headers: { accept: 'text/event-stream' }, body: { agentId: s.agentId, content: 'hi' } });
  assert.equal(create.status, 429);
  assert.equal((await s.c.sessions.messages(idle)).items.length, 0, 'the refused message was not accepted');
  assert.equal(s.host.frames.filter((f) => f.t === 'run.start').length, starts, 'nothing was dispatched');

  // Another account is not affected.
  const other = await setup();
  const osid = await runningSession(other);
  const o = await openSse(`${t.url}/api/v1/sessions/${osid}/events`, { headers: { authorization: `Bearer ${other.user.key}` } });
  assert.equal(o.status, 200);
  o.close();

  open.pop()!.close();
  const again = await eventually(async () => {
    const r = await openSse(`${t.url}/api/v1/sessions/${sid}/events`, { headers: { authorization: `Bearer ${s.user.key}` } });
    if (r.status === 200) return r;
    await r.ended;
    return undefined;
  }, 5000, 50);
  again.close();
  for (const r of open) r.close();
  s.host.close();
  other.host.close();
});
