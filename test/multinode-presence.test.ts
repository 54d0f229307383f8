// Presence across nodes: two hubs in this process on one PostgreSQL database
// and one Redis (the same topology as two processes, minus the kill; the
// SIGKILL case is in multinode.test.ts). A host channel held by node A is
// reachable through node B, a reconnect to B takes over, and a host nobody
// holds fails fast. RedisPresence's own rules are checked directly too.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { RedisBus } from '../src/bus/redis.js';
import { RedisPresence } from '../src/hosts/presence-redis.js';
import { CloseCodes } from '../host-protocol/version.js';
import { hostsTopic } from '../src/hosts/gateway-impl.js';
import { apiError } from './helpers/api-error.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;

describe('two hub nodes sharing PostgreSQL and Redis', { skip }, () => {
  let a: TestHub;
  let b: TestHub;
  let drop: () => Promise<void>;
  const hosts: FakeHost[] = [];
  before(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    const prefix = testPrefix();
    const shared = { databaseUrl: db.url, redisUrl, redisPrefix: prefix, hostHeartbeatTimeoutMs: 3000 };
    a = await startTestHub({ ...shared, nodeId: 'node-a' });
    b = await startTestHub({ ...shared, nodeId: 'node-b', adminApiKey: a.adminKey });
  });
  after(async () => {
    for (const h of hosts) h.close();
    await a?.close();
    await b?.close();
    await drop?.();
  });

  const view = (t: TestHub, key: string, id: string) => t.client(key).hosts.get(id);

  test('a host on node A reads online through node B, and B reaches it (request and reply cross nodes)', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const fh = await connectFakeHost(a, credential, { capacity: 2 });
    hosts.push(fh);
    assert.equal(a.hub.ctx.bus.kind, 'redis');
    const seen = await view(b, u.key, hostId);
    assert.equal(seen.status, 'online');
    assert.equal(seen.capacity, 2);
    const dirs = await b.client(u.key).hosts.directories(hostId, 'work');
    assert.equal(JSON.stringify(dirs).includes('work/src'), true);
    assert.ok(fh.frames.some((f) => f.t === 'dirs.list'), 'the frame went to the host on node A');
  });

  test('a hello publishes a takeover only when another node held the host', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const published = (t: TestHub) => {
      const topics: string[] = [];
      const bus = t.hub.ctx.bus;
      const publish = bus.publish.bind(bus);
      bus.publish = (topic, payload) => (topics.push(topic), publish(topic, payload));
      return { topics, restore: () => void (bus.publish = publish) };
    };
    const [onA, onB] = [published(a), published(b)];
    try {
      const first = await connectFakeHost(a, credential);
      hosts.push(first);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(onA.topics.filter((x) => x.startsWith(hostsTopic(''))), [], 'nobody held it: no takeover');
      const second = await connectFakeHost(b, credential);
      hosts.push(second);
      assert.equal((await first.closed).code, CloseCodes.REPLACED.code);
      assert.deepEqual(onB.topics.filter((x) => x.startsWith(hostsTopic(''))), [hostsTopic('node-a')], 'node A held it: one takeover, to node A');
    } finally {
      onA.restore();
      onB.restore();
    }
  });

  test('the host reconnects to node B: B takes over, A drops its stale channel, requests follow the host', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const onA = await connectFakeHost(a, credential);
    hosts.push(onA);
    const onB = await connectFakeHost(b, credential);
    hosts.push(onB);
    const closedA = await Promise.race([onA.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000))]);
    assert.equal(closedA?.code, CloseCodes.REPLACED.code, 'node A closed the stale channel');
    // A's close must not erase B's presence.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await view(a, u.key, hostId)).status, 'online');
    const before = onB.frames.length;
    await a.client(u.key).hosts.directories(hostId); // a 200
    assert.ok(onB.frames.slice(before).some((f) => f.t === 'dirs.list'), 'the request reached the channel on node B');
  });

  test('a host no node holds fails fast through either node', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const fh = await connectFakeHost(b, credential);
    fh.close();
    await eventually(async () => (await view(a, u.key, hostId)).status === 'offline', 3000, 50);
    for (const t of [a, b]) {
      // Fast by construction, however loaded the machine: answered from presence before any request
      // is opened, so nothing waits for a reply or its 3-s timeout (which would answer 504 5040, not 4094).
      const forwarding = (t.hub.runFrames.gateway as any).forwarding as { ask: (...args: unknown[]) => Promise<unknown> };
      const ask = forwarding.ask;
      let opened = 0;
      forwarding.ask = function (this: unknown, ...args: unknown[]) {
        opened++;
        return ask.apply(this, args);
      };
      try {
        await assert.rejects(t.client(u.key).hosts.directories(hostId), apiError(409, '4094'));
      } finally {
        forwarding.ask = ask;
      }
      assert.equal(opened, 0, 'no request opened for a host no node holds');
    }
  });

  test('a key refreshed on node A is refused on node B at once (auth invalidation over Redis)', async () => {
    const u = await a.user();
    assert.equal((await b.client(u.key).me()).id, u.id);
    const keys = await a.client(u.key).keys.list();
    const id = keys.items[0].id;
    const fresh = await a.client(u.key).keys.refresh(id);
    await eventually(() => assert.rejects(b.client(u.key).me(), apiError(401)).then(() => true), 2000, 20);
    assert.equal((await b.client(fresh.key).me()).id, u.id);
  });
});

describe('RedisPresence rules', { skip: 'skip' in redis ? redis.skip : undefined }, () => {
  let bus: RedisBus;
  before(async () => {
    bus = await RedisBus.connect(redisUrl!, { prefix: testPrefix() });
  });
  after(() => bus.close());
  const entry = (nodeId: string | null) => ({ nodeId, running: 1, capacity: 3, engines: [{ id: 'claude-code', displayName: 'Claude Code' }], lastSeenAt: Date.now() });
  const hid = () => `hst_${randomBytes(4).toString('hex')}`;
  const presence = (node: string, timing?: { nodeTtlMs: number; renewMs: number }) => new RedisPresence(bus.client, (k) => bus.key(k), node, undefined, timing);

  test('set, get, patch, refresh; removal only by the holding node', async () => {
    const p = presence('n1');
    const h = hid();
    const e = entry('n1');
    await p.set(h, e, 5000);
    const got = (await p.get(h))!;
    assert.deepEqual({ ...got, lastSeenAt: 0 }, { ...e, lastSeenAt: 0 });
    assert.ok(got.lastSeenAt >= e.lastSeenAt, 'last seen: the entry\'s, or its node\'s later renewal');
    await p.patch(h, { running: 3 });
    assert.equal((await p.get(h))!.running, 3);
    const absent = hid();
    await p.patch(absent, { running: 1 });
    // A patch that made a key would leave a partial entry without a TTL: read by nobody, kept for ever.
    assert.equal(await bus.client.exists(bus.key(`presence:${absent}`)), 0, 'an absent entry stays absent');
    assert.equal(await p.get(absent), undefined);
    const ttl = () => bus.client.pttl(bus.key(`presence:${h}`));
    await p.refresh([h], 'n1', 60_000);
    assert.ok((await ttl()) > 5000, 'extended by its node');
    await p.set(h, e, 5000);
    await p.refresh([h], 'n2', 60_000); // another node cannot extend it
    assert.ok((await ttl()) <= 5000, 'not extended by another node');
    await p.remove(h, 'n2');
    assert.ok(await p.get(h), 'a node that does not hold the host cannot remove it');
    await p.remove(h, 'n1');
    assert.equal(await p.get(h), undefined);
    const many = await p.getMany([h, hid()]);
    assert.equal(many.size, 0);
    await p.close();
  });

  test('set answers the other node whose entry it replaced (the only one that can still hold a channel)', async () => {
    const [p1, p2] = [presence('n1'), presence('n2')];
    const h = hid();
    assert.equal((await p1.set(h, entry('n1'), 5000)).prev, null, 'nobody held it');
    assert.equal((await p1.set(h, entry('n1'), 5000)).prev, null, 'the same node again');
    assert.equal((await p2.set(h, entry('n2'), 5000)).prev, 'n1');
    await p2.remove(h, 'n2');
    assert.equal((await p1.set(h, entry('n1'), 5000)).prev, null, 'n2 let it go');
    await Promise.all([p1.close(), p2.close()]);
  });

  test('each write of a host takes a later epoch than the last, on any node, after a removal or an expiry too', async () => {
    const [p1, p2] = [presence('n1'), presence('n2')];
    const h = hid();
    const epochs: number[] = [];
    const write = async (p: RedisPresence, node: string, ttl = 5000) => epochs.push((await p.set(h, entry(node), ttl)).epoch);
    await Promise.all([write(p1, 'n1'), write(p2, 'n2'), write(p1, 'n1'), write(p2, 'n2')]); // one turn: Redis orders them
    await p2.remove(h, 'n2');
    await write(p1, 'n1', 50);
    await new Promise((r) => setTimeout(r, 100)); // expired
    assert.equal(await p1.get(h), undefined);
    await write(p2, 'n2');
    // Answers come back in the order Redis ran the writes (one connection), so the list must rise.
    assert.ok(epochs.every((e, i) => Number.isSafeInteger(e) && e > 0 && (i === 0 || e > epochs[i - 1])), `epochs ${epochs}`);
    await Promise.all([p1.close(), p2.close()]);
  });

  test('the writes of one turn go out in one socket write, in call order, and a read after them sees them', async () => {
    const p = presence('n1');
    const stream = (bus.client as unknown as { stream: { write: (...x: unknown[]) => boolean } }).stream;
    const realWrite = stream.write.bind(stream);
    let writes = 0;
    stream.write = (...x: unknown[]) => (writes++, realWrite(...x));
    try {
      const hs = Array.from({ length: 40 }, hid);
      const gone = hid();
      const sets = hs.map((h) => p.set(h, entry('n1'), 5000));
      const goneSet = p.set(gone, entry('n1'), 5000);
      const removed = p.remove(gone, 'n1'); // after its set, in the same turn: the entry is gone
      const patched = p.patch(hs[0], { running: 4 });
      const written = await Promise.all(sets);
      await Promise.all([goneSet, removed, patched]);
      assert.equal(writes, 1, '43 writes of one turn are one write to the socket');
      assert.ok(written.every((w) => w.prev === null && w.epoch > 0));
      stream.write = realWrite;
      // A read issued in the same turn as writes goes after them.
      const later = hid();
      void p.set(later, entry('n1'), 5000);
      const seen = await p.getMany([...hs, gone, later]);
      assert.equal(seen.size, 41);
      assert.equal(seen.get(hs[0])!.running, 4);
      assert.ok(!seen.has(gone));
      assert.ok(seen.has(later));
    } finally {
      stream.write = realWrite;
      await p.close();
    }
  });

  test('the consecutive sets of one turn are one script call; a removal between two sets of a host keeps its place', async () => {
    const p = presence('n1');
    const sizes: number[] = [];
    const client = bus.client as unknown as { pipeline: (...a: unknown[]) => { length: number; exec: (...a: unknown[]) => Promise<unknown> } };
    const pipeline = client.pipeline;
    client.pipeline = (...a: unknown[]) => {
      const pl = pipeline.apply(bus.client, a);
      const exec = pl.exec.bind(pl);
      pl.exec = (...b: unknown[]) => (sizes.push(pl.length), exec(...b));
      return pl;
    };
    try {
      const hs = Array.from({ length: 40 }, hid);
      const back = hs[0];
      const sets = hs.map((h) => p.set(h, entry('n1'), 5000));
      const removed = p.remove(back, 'n1');
      const again = p.set(back, entry('n1'), 5000);
      const written = await Promise.all(sets);
      await removed;
      const last = await again;
      assert.deepEqual(sizes, [3], 'forty sets, a removal and a set: three commands in one pipeline');
      assert.ok(written.every((w) => w.prev === null && Number.isSafeInteger(w.epoch) && w.epoch > 0), 'each set answered with its own epoch');
      assert.ok(last.epoch > written[0].epoch, 'the set after the removal is the later write');
      assert.ok(await p.get(back), 'and it holds: the removal went between the two sets');
      assert.equal((await p.getMany(hs)).size, 40);
    } finally {
      client.pipeline = pipeline;
      await p.close();
    }
  });

  test('an entry expires with its TTL unless refreshed', async () => {
    const p = presence('n1');
    const [h1, h2] = [hid(), hid()];
    await p.set(h1, entry('n1'), 400);
    await p.set(h2, entry('n1'), 5000);
    await p.refresh([h2], 'n1', 60_000);
    // The TTLs as given (read from Redis, not inferred from when a read happens to come).
    const pttl = (h: string) => bus.client.pttl(bus.key(`presence:${h}`));
    const t1 = await pttl(h1);
    // -2: gone already, which a stall of this process past 400 ms allows.
    assert.ok(t1 === -2 || (t1 >= 0 && t1 <= 400), `h1 expires with its 400-ms TTL: ${t1}`);
    const t2 = await pttl(h2);
    assert.ok(t2 > 5000 && t2 <= 60_000, `h2's refresh set its TTL anew: ${t2}`);
    // Waited for, not slept: however late this process runs, h1 goes and h2, refreshed, stays.
    await eventually(async () => !(await p.getMany([h1])).has(h1) || undefined, 15_000, 20);
    const m = await p.getMany([h1, h2]);
    assert.deepEqual([...m.keys()], [h2]);
    await p.close();
  });

  test('the hosts of a node whose liveness key lapsed read offline before their own TTL', async () => {
    // A long liveness TTL: the key lapses when the test says (below), not when this process runs late.
    const dead = presence('n-dead', { nodeTtlMs: 60_000, renewMs: 100 });
    const live = presence('n-live');
    const [h1, h2, h3] = [hid(), hid(), hid()];
    await dead.set(h1, entry('n-dead'), 60_000);
    await live.set(h2, entry('n-live'), 60_000);
    await live.set(h3, entry(null), 60_000); // an HTTP-only host belongs to no node
    assert.equal((await live.getMany([h1, h2, h3])).size, 3);
    // A crash: the renewals stop, nothing is cleaned up, and the liveness key lapses.
    clearInterval((dead as unknown as { renew: NodeJS.Timeout }).renew);
    assert.equal(await bus.client.pexpire(bus.key('node:n-dead'), 1), 1, 'the liveness key was there');
    await eventually(async () => !(await live.getMany([h1])).has(h1) || undefined, 15_000, 20);
    assert.deepEqual([...(await live.getMany([h1, h2, h3])).keys()].sort(), [h2, h3].sort());
    // A clean close drops the liveness key at once.
    await live.close();
    assert.deepEqual([...(await dead.getMany([h2, h3])).keys()], [h3]);
  });

  test('a node restarted under the same id: the entries of its earlier boot read offline at once, and its close leaves the new boot\'s key', async () => {
    const before = presence('n-again');
    const [h1, h2] = [hid(), hid()];
    await before.set(h1, entry('n-again'), 600_000);
    assert.ok(await before.get(h1));
    // A crash, then the same NODE_ID starts again before the old liveness key has lapsed.
    clearInterval((before as unknown as { renew: NodeJS.Timeout }).renew);
    const after = presence('n-again');
    await after.set(h2, entry('n-again'), 600_000);
    assert.deepEqual([...(await after.getMany([h1, h2])).keys()], [h2], 'h1 was held by the boot that died');
    // The old boot's entry is its own again only if the new boot writes it (the host says hello to it).
    assert.deepEqual((await after.refresh([h1], 'n-again', 600_000)).restored, []);
    // A late close of the earlier boot must not take the new boot's hosts offline.
    await before.close();
    assert.ok(await after.get(h2), 'the new boot\'s liveness key is left alone');
    await after.close();
    assert.equal(await after.get(h2), undefined);
  });

  test('a host the new boot holds whose entry an earlier boot of the node wrote last is written again at the next refresh', async () => {
    const before = presence('n-late');
    clearInterval((before as unknown as { renew: NodeJS.Timeout }).renew);
    const after = presence('n-late');
    const h = hid();
    await after.set(h, entry('n-late'), 600_000);
    // A write of the earlier boot landing late (queued before it stopped) leaves the host under a boot that no longer lives.
    await before.set(h, entry('n-late'), 600_000);
    assert.equal(await after.get(h), undefined, 'read offline: its boot is not the live one');
    assert.deepEqual((await after.refresh([h], 'n-late', 600_000)).restored, [h], 'this boot holds the host: its entry is written again');
    assert.ok(await after.get(h), 'online again without a reconnect');
    await before.close();
    await after.close();
  });

  test('a live node\'s entry reads last seen at the node\'s latest renewal, without a write per host', async () => {
    const p = presence('n-stamp', { nodeTtlMs: 5000, renewMs: 100 });
    const h = hid();
    await p.set(h, { ...entry('n-stamp'), lastSeenAt: 1000 }, 600_000);
    const t0 = Date.now();
    await eventually(async () => ((await p.get(h))!.lastSeenAt >= t0 + 200) || undefined, 5000, 20);
    await p.close();
  });

  test('a removal Redis did not take is sent again: at the next refresh, and when Redis is ready again', async () => {
    const p = presence('n-rm');
    const client = bus.client as unknown as Record<string, unknown>;
    /** Removes the hosts while Redis refuses every removal (a connection lost under the command). */
    const removeRefused = async (...hs: string[]) => {
      const real = client.presenceRemove;
      client.presenceRemove = () => Promise.reject(new Error('connection lost'));
      try {
        for (const h of hs) await p.remove(h, 'n-rm');
      } finally {
        client.presenceRemove = real;
      }
    };
    const [h1, h2] = [hid(), hid()];
    await p.set(h1, entry('n-rm'), 600_000);
    await p.set(h2, entry('n-rm'), 600_000);
    await removeRefused(h1, h2);
    assert.equal(p.pendingRemovals, 2);
    assert.equal((await p.getMany([h1, h2])).size, 2, 'the node lives: both still read online');
    await p.refresh([], 'n-rm', 600_000);
    await eventually(async () => (await p.getMany([h1, h2])).size === 0 || undefined, 5000, 20);
    // And on Redis's 'ready' (a reconnect), for one that failed again meanwhile.
    const h3 = hid();
    await p.set(h3, entry('n-rm'), 600_000);
    await removeRefused(h3);
    bus.client.emit('ready');
    await eventually(async () => !(await p.get(h3)) || undefined, 5000, 20);
    assert.equal(p.pendingRemovals, 0);
    // A host that said hello here again is not removed by a late retry.
    const h4 = hid();
    await p.set(h4, entry('n-rm'), 600_000);
    await removeRefused(h4);
    await p.set(h4, entry('n-rm'), 600_000);
    await p.refresh([h4], 'n-rm', 600_000);
    assert.ok(await p.get(h4));
    // Nor one that said hello here while its removal was still in flight, failing after the hello's write.
    const h5 = hid();
    await p.set(h5, entry('n-rm'), 600_000);
    const real = client.presenceRemove;
    client.presenceRemove = () => new Promise((_, reject) => setTimeout(() => reject(new Error('connection lost')), 50));
    try {
      const removing = p.remove(h5, 'n-rm');
      await new Promise((r) => setImmediate(r)); // the removal is sent (a turn's writes go out at its end)
      await p.set(h5, entry('n-rm'), 600_000);
      await removing;
    } finally {
      client.presenceRemove = real;
    }
    assert.equal(p.pendingRemovals, 0, 'the host is held here again: nothing to remove');
    await p.refresh([h5], 'n-rm', 600_000);
    assert.ok(await p.get(h5), 'still online after the next refresh');
    await p.close();
  });

  test('an entry rewritten after Redis lost it carries the patches made since its hello', async () => {
    const p = presence('n-patched');
    const h = hid();
    await p.set(h, entry('n-patched'), 600_000);
    const engines = [{ id: 'codex', displayName: 'Codex' }];
    await p.patch(h, { running: 3, engines });
    await bus.client.del(bus.key(`presence:${h}`)); // a Redis restarted empty
    assert.deepEqual((await p.refresh([h], 'n-patched', 600_000)).restored, [h]);
    const got = (await p.get(h))!;
    assert.equal(got.running, 3, 'the running count as last patched, not as at hello');
    assert.deepEqual(got.engines, engines);
    await p.close();
  });

  test('a node whose liveness key Redis lost writes it again when Redis is ready, not only at the next renewal', async () => {
    const p = presence('n-ready', { nodeTtlMs: 600_000, renewMs: 600_000 });
    const h = hid();
    await p.set(h, entry('n-ready'), 600_000);
    assert.ok(await p.get(h));
    await bus.client.del(bus.key('node:n-ready')); // a Redis restarted empty (its entries are rewritten by the refresh)
    assert.equal(await p.get(h), undefined, 'without its node\'s key the host reads offline');
    bus.client.emit('ready');
    await eventually(async () => (await p.get(h)) || undefined, 2000, 20);
    await p.close();
  });
});
