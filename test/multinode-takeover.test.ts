// Takeovers between hub nodes are ordered by the presence write of the hello
// that published them: a host that bounces A -> B -> A keeps its newest
// channel on A although B's takeover reaches A late, also while A's own
// write is still in flight; a genuine move A -> B still closes A's channel.
// Each race is made deterministic by holding a node's presence write
// (written to Redis, its answer held back) and by a frame sent after the
// takeover from the same node, on the same node's topic: the Bus keeps one
// node's publishes in order, so when that frame reaches the host the takeover
// was handled before it.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { CloseCodes } from '../host-protocol/version.js';
import type { Presence } from '../src/hosts/presence.js';
import { decode } from '@msgpack/msgpack';
import { publishObj } from '../src/bus/bus.js';
import { hostsTopic } from '../src/hosts/gateway-impl.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;

const holds: Array<() => void> = [];
/** Holds the answer of node `t`'s next presence writes (they reach Redis) until release(). */
function holdPresence(t: TestHub) {
  const presence = (t.hub.runFrames.gateway as unknown as { presenceStore: Presence }).presenceStore;
  const real = presence.set.bind(presence);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let wrote!: () => void;
  const written = new Promise<void>((r) => (wrote = r));
  presence.set = (async (...args: Parameters<Presence['set']>) => {
    const out = await real(...args);
    wrote();
    await gate;
    return out;
  }) as Presence['set'];
  const release = () => {
    delete (presence as { set?: unknown }).set; // the prototype's again
    open();
  };
  holds.push(release);
  return {
    /** Resolves once the write is in Redis. */
    written,
    release,
  };
}

/** Counts node `t`'s takeovers of host `hostId` (published on the topic of the node that held it). */
function hostPublishes(t: TestHub, hostId: string) {
  const bus = t.hub.ctx.bus;
  const publish = bus.publish.bind(bus);
  const out = { count: 0, restore: () => void (bus.publish = publish) };
  bus.publish = (topic, payload) => {
    const m = topic.startsWith(hostsTopic('')) ? (decode(payload) as { k: string; h: string }) : undefined;
    if (m?.k === 'takeover' && m.h === hostId) out.count++;
    publish(topic, payload);
  };
  return out;
}

let sentinels = 0;
/**
 * Publishes a frame for the host from node `via` on the topic of node `at`, which holds (or held) the
 * channel `fh`, and answers how `fh` ended up: 'open' when the frame reached it, else its close code.
 * Published after `via`'s earlier publishes to `at`, it arrives after them.
 */
async function stillOpen(via: TestHub, hostId: string, fh: FakeHost, at: TestHub): Promise<string> {
  const runId = `run_sentinel${++sentinels}`;
  publishObj(via.hub.ctx.bus, hostsTopic(at.hub.ctx.config.nodeId), { k: 'send', h: hostId, frame: { t: 'run.abort', runId } });
  return Promise.race([
    fh.closed.then((c) => `closed ${c.code}`),
    fh.next((f) => f.t === 'run.abort' && f.runId === runId).then(() => 'open'),
  ]);
}

describe('takeovers across nodes are ordered by presence epochs', { skip }, () => {
  let a: TestHub;
  let b: TestHub;
  let drop: () => Promise<void>;
  const hosts: FakeHost[] = [];
  before(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    const shared = { databaseUrl: db.url, redisUrl, redisPrefix: testPrefix(), hostHeartbeatTimeoutMs: 60_000 };
    a = await startTestHub({ ...shared, nodeId: 'node-a' });
    b = await startTestHub({ ...shared, nodeId: 'node-b', adminApiKey: a.adminKey });
  });
  afterEach(() => {
    for (const release of holds.splice(0)) release();
  });
  after(async () => {
    for (const h of hosts) h.close();
    await a?.close();
    await b?.close();
    await drop?.();
  });

  const connect = async (t: TestHub, credential: string) => {
    const fh = await connectFakeHost(t, credential);
    hosts.push(fh);
    return fh;
  };
  const holder = async (t: TestHub, hostId: string) => (await t.hub.runFrames.gateway.entries([hostId])).get(hostId)?.nodeId;

  test('A -> B -> A: B\'s late takeover does not close the newer channel on A', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const first = await connect(a, credential);
    await eventually(async () => (await holder(b, hostId)) === 'node-a', 5000, 20);
    // The host moves to B: B's presence write replaces A's, its takeover waits for the answer.
    const heldB = holdPresence(b);
    const onB = await connect(b, credential);
    await heldB.written;
    first.close();
    await first.closed;
    // And back to A before B publishes: A's write replaces B's and A's takeover goes to B.
    const back = await connect(a, credential);
    await eventually(async () => (await holder(b, hostId)) === 'node-a', 5000, 20);
    await a.hub.ctx.bus.ready();
    await stillOpen(a, hostId, onB, b); // B has had A's takeover (while its own write is unanswered)
    const fromB = hostPublishes(b, hostId);
    try {
      heldB.release();
      assert.equal((await onB.closed).code, CloseCodes.REPLACED.code, 'B gave way to the newer channel on A');
      await eventually(async () => fromB.count > 0, 5000, 10); // B's late takeover is out
      assert.equal(await stillOpen(b, hostId, back, a), 'open', 'the newest channel, on A, stays');
    } finally {
      fromB.restore();
    }
    assert.equal(await holder(b, hostId), 'node-a');
    const before = back.frames.length;
    await b.client(u.key).hosts.directories(hostId);
    assert.ok(back.frames.slice(before).some((f) => f.t === 'dirs.list'), 'requests through B reach the channel on A');
  });

  test('a stale takeover that arrives while the newer channel\'s own write is in flight is judged once it is known', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const first = await connect(a, credential);
    await eventually(async () => (await holder(b, hostId)) === 'node-a', 5000, 20);
    const heldB = holdPresence(b);
    const onB = await connect(b, credential);
    await heldB.written;
    first.close();
    await first.closed;
    // Back to A, whose write reaches Redis (after B's) but whose answer is held too.
    const heldA = holdPresence(a);
    const back = await connect(a, credential);
    await heldA.written;
    await a.hub.ctx.bus.ready();
    const fromB = hostPublishes(b, hostId);
    try {
      // B's takeover reaches A while A does not know yet where its channel stands.
      heldB.release();
      await eventually(async () => fromB.count > 0, 5000, 10);
      assert.equal(await stillOpen(b, hostId, back, a), 'open', 'not closed on a takeover it cannot judge yet');
    } finally {
      fromB.restore();
    }
    // A's write was the later one: A keeps its channel, and its own takeover closes B's.
    heldA.release();
    assert.equal((await onB.closed).code, CloseCodes.REPLACED.code);
    assert.equal(await stillOpen(b, hostId, back, a), 'open');
    assert.equal(await holder(b, hostId), 'node-a');
  });

  test('a takeover that arrives before the older channel\'s own write is answered closes it once it is', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const heldA = holdPresence(a);
    const first = await connect(a, credential);
    await heldA.written;
    await a.hub.ctx.bus.ready();
    // The host moves to B; B's takeover reaches A before A knows its own write's place.
    const fromB = hostPublishes(b, hostId);
    try {
      const onB = await connect(b, credential);
      await eventually(async () => fromB.count > 0, 5000, 10);
      await stillOpen(b, hostId, first, a); // whatever A made of the takeover, it has had it
      heldA.release();
      assert.equal((await first.closed).code, CloseCodes.REPLACED.code, 'the older channel on A gives way');
      assert.equal(await stillOpen(a, hostId, onB, b), 'open');
    } finally {
      fromB.restore();
    }
    assert.equal(await holder(a, hostId), 'node-b');
  });

  test('a genuine move A -> B: A\'s channel is REPLACED, B serves the host', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const first = await connect(a, credential);
    await eventually(async () => (await holder(b, hostId)) === 'node-a', 5000, 20);
    const onB = await connect(b, credential);
    assert.equal((await first.closed).code, CloseCodes.REPLACED.code);
    assert.equal(await holder(a, hostId), 'node-b');
    const before = onB.frames.length;
    await a.client(u.key).hosts.directories(hostId);
    assert.ok(onB.frames.slice(before).some((f) => f.t === 'dirs.list'));
  });
});
