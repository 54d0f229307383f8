// A message sent through node B for a host whose channel is on node A reads
// the host's presence at most once: the read that checks the host is online
// and its capacity also names the node its run.start goes to (before, the
// run.start read presence a second time to find that node), and node B keeps
// that reading a moment, so a burst of messages for the host reads it once.
// A host that moved after the reading still gets its run.start: the node
// named routes it on. A host gone from every node after the reading: the run
// ends HOST_OFFLINE at once, not after the heartbeat window, and node B reads
// presence again for the next message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import type { FrameOf, HubToHost } from '../host-protocol/frames.js';
import type { PresenceEntry } from '../src/hosts/presence.js';
import type { ChannelTiming } from '../src/hosts/gateway-impl.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (three hubs need one shared PostgreSQL)' : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;

let a: TestHub;
let b: TestHub;
let c: TestHub;
const hosts: FakeHost[] = [];
let drop: (() => Promise<void>) | undefined;

before(async () => {
  if (skip) return;
  const db = await createTestDatabase();
  drop = db.drop;
  const shared = { databaseUrl: db.url, redisUrl, redisPrefix: testPrefix(), hostHeartbeatTimeoutMs: 60_000 };
  a = await startTestHub({ ...shared, nodeId: 'node-a' });
  b = await startTestHub({ ...shared, nodeId: 'node-b', adminApiKey: a.adminKey });
  c = await startTestHub({ ...shared, nodeId: 'node-c', adminApiKey: a.adminKey });
});

after(async () => {
  for (const h of hosts) h.close();
  await a?.close();
  await b?.close();
  await c?.close();
  await drop?.();
});

type PresenceReads = { getMany(ids: string[]): Promise<Map<string, PresenceEntry>> };
/** A node's presence store (private to its gateway): every presence read is one getMany call, one Redis round trip. */
const presenceStoreOf = (hub: TestHub) => (hub.hub.runFrames.gateway as unknown as { presenceStore: PresenceReads }).presenceStore;

/** Counts a node's presence reads naming `hostId`. */
function countReads(hub: TestHub, hostId: string): { reads: number; restore(): void } {
  const store = presenceStoreOf(hub);
  const original = store.getMany;
  const counter = {
    reads: 0,
    restore: () => void (store.getMany = original),
  };
  store.getMany = function (ids: string[]) {
    if (ids.includes(hostId)) counter.reads++;
    return original.call(this, ids);
  };
  return counter;
}

/** How long `hub` reuses a reading of another node's host (0: never). */
function reuse(hub: TestHub, ms: number): void {
  (hub.hub.runFrames.gateway.timing as ChannelTiming).presenceReuseMs = ms;
}

async function setUp(via: TestHub) {
  const u = await a.user();
  const { hostId, credential } = await pairHost(a, u.key);
  const host = await connectFakeHost(a, credential, { capacity: 5 });
  hosts.push(host);
  await eventually(async () => (await via.hub.runFrames.gateway.entries([hostId])).get(hostId)?.nodeId === 'node-a', 5000, 20);
  const agent = await eventually(async () => {
    const r = await via.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'routed', scope: 'private', hostId, engine: 'claude-code' } });
    return r.status === 201 ? r.body.data : undefined;
  });
  const s = await via.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId: agent.id } });
  assert.equal(s.status, 201, s.text);
  return { u, hostId, credential, host, sessionId: s.body.data.id as string };
}

async function turn(via: TestHub, key: string, sessionId: string, host: FakeHost, content: string): Promise<void> {
  const m = await via.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: key, body: { content } });
  assert.equal(m.status, 202, m.text);
  assert.equal(m.body.status, 'processing', m.text);
  const start = await host.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start' && f.sessionId === sessionId && f.prompt === content);
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => ((await via.api('GET', `/api/v1/sessions/${sessionId}`, { token: key })).body.data.status === 'active') || undefined, 5000, 20);
}

test('a message through node B for a host on node A: one presence read, and the run.start reaches the host', { skip }, async () => {
  const { u, hostId, host, sessionId } = await setUp(b);
  reuse(b, 0); // every message reads
  try {
    for (let i = 0; i < 3; i++) {
      const spy = countReads(b, hostId);
      try {
        await turn(b, u.key, sessionId, host, `hello ${i}`);
      } finally {
        spy.restore();
      }
      assert.equal(spy.reads, 1, `message ${i}: node B read the host's presence ${spy.reads} times`);
    }
  } finally {
    reuse(b, 60_000);
  }
});

test('messages in a row through node B: the host\'s presence is read once, then again once the reading is over', { skip }, async () => {
  const { u, hostId, host, sessionId } = await setUp(b);
  reuse(b, 60_000);
  const spy = countReads(b, hostId);
  try {
    for (let i = 0; i < 4; i++) await turn(b, u.key, sessionId, host, `burst ${i}`);
    assert.equal(spy.reads, 1, `node B read the host's presence ${spy.reads} times for four messages`);
    reuse(b, 1);
    await new Promise((r) => setTimeout(r, 5));
    await turn(b, u.key, sessionId, host, 'after the window');
    assert.equal(spy.reads, 2, 'a reading past its window is read again');
  } finally {
    spy.restore();
    reuse(b, 60_000);
  }
});

test('the host left every node after node B kept its reading: the run ends HOST_OFFLINE at once, and the next message reads again', { skip }, async () => {
  const { u, hostId, host, sessionId } = await setUp(b);
  reuse(b, 60_000); // the heartbeat window is 60 s too: only the hand-back can end the run within this test
  await turn(b, u.key, sessionId, host, 'while online');
  host.close();
  await eventually(async () => !(await a.hub.runFrames.gateway.entries([hostId])).has(hostId) || undefined, 5000, 20);
  const spy = countReads(b, hostId);
  try {
    const m = await b.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: 'after it left' } });
    assert.equal(m.status, 202, m.text); // the kept reading said online: accepted, as a message read just before the host left
    assert.equal(spy.reads, 0, 'node B used its kept reading');
    const failed = await eventually(async () => {
      const r = await a.hub.ctx.em().getConnection().execute<Array<{ status: string; error_code: string | null }>>(
        `select status, error_code from session_tasks where id = ?`, [m.body.taskId]);
      return r[0]?.status === 'failed' ? r[0] : undefined;
    }, 5000, 20);
    assert.equal(failed.error_code, 'HOST_OFFLINE');
    // Node A told node B its reading was wrong: the next message reads presence, and is refused with nothing stored.
    await eventually(async () => !b.hub.runFrames.gateway['routing'].recent.get(hostId) || undefined, 5000, 20);
    const next = await b.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: 'still gone' } });
    assert.equal(next.status, 503, next.text);
    assert.equal(spy.reads, 1);
  } finally {
    spy.restore();
  }
});

test('the host moved to node C after node B read its presence: the run.start still reaches it, through node A', { skip }, async () => {
  const { u, hostId, credential, host, sessionId } = await setUp(b);
  reuse(b, 0); // the message reads presence (the hook below moves the host at that read)
  await turn(b, u.key, sessionId, host, 'before the move');
  // Node B reads presence (node A), then the host reconnects to node C before the run.start is sent.
  const store = presenceStoreOf(b);
  const original = store.getMany;
  let moved: FakeHost | undefined;
  store.getMany = async function (ids: string[]) {
    const found = await original.call(this, ids);
    if (ids.includes(hostId) && !moved) {
      host.close();
      moved = await connectFakeHost(c, credential, { capacity: 5 });
      hosts.push(moved);
      await eventually(async () => (await original.call(this, [hostId])).get(hostId)?.nodeId === 'node-c' || undefined, 5000, 20);
    }
    return found; // still naming node A
  };
  try {
    const m = await b.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: 'after the move' } });
    assert.equal(m.status, 202, m.text);
    assert.ok(moved, 'the host moved during the message');
    const start = await moved.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start' && f.sessionId === sessionId && f.prompt === 'after the move', 10_000);
    moved.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => ((await b.api('GET', `/api/v1/sessions/${sessionId}`, { token: u.key })).body.data.status === 'active') || undefined, 5000, 20);
  } finally {
    store.getMany = original;
    reuse(b, 60_000);
  }
});
