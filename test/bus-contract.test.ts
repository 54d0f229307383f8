// One contract, two implementations: every test below runs against the
// in-process LocalBus and against RedisBus (two RedisBus instances stand for
// two hub nodes), and against RedisBus with its keyed topics spread over two
// more Redis instances (REDIS_SHARD_URLS; servers of the test's own). Redis tests
// skip with a reason when REDIS_URL is missing.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Bus } from '../src/bus/bus.js';
import { publishObj, subscribeObj } from '../src/bus/bus.js';
import { LocalBus } from '../src/bus/local.js';
import { RedisBus } from '../src/bus/redis.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { eventually } from './helpers/host.js';
import { hasRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';

interface Impl {
  name: string;
  /** Two buses that reach each other: two nodes (Redis) or the one process (local). */
  nodes(): Promise<[Bus, Bus]>;
}

const redis = await redisUrlOrSkip();
const opened: Bus[] = [];
const shardServers: OwnRedis[] = [];
after(async () => {
  await Promise.all(opened.map((b) => b.close()));
  await Promise.all(shardServers.map((s) => s.kill()));
});

/** Two Redis servers of this file's own, started once, for the sharded bus. */
let shards: Promise<string[]> | undefined;
function shardUrls(): Promise<string[]> {
  return (shards ??= Promise.all([0, 1].map(async () => {
    const s = await ownRedis();
    shardServers.push(s);
    await s.start();
    return s.url;
  })));
}

const impls: Array<Impl & { skip?: string }> = [
  {
    name: 'LocalBus',
    async nodes() {
      const b = new LocalBus();
      opened.push(b);
      return [b, b];
    },
  },
  {
    name: 'RedisBus',
    skip: 'skip' in redis ? redis.skip : undefined,
    async nodes() {
      const url = (redis as { url: string }).url;
      const prefix = testPrefix();
      const a = await RedisBus.connect(url, { prefix });
      const b = await RedisBus.connect(url, { prefix });
      opened.push(a, b);
      return [a, b];
    },
  },
  {
    name: 'RedisBus with two shards',
    skip: 'skip' in redis ? redis.skip : hasRedisServer ? undefined : 'no redis-server binary to start the shards',
    async nodes() {
      const url = (redis as { url: string }).url;
      const prefix = testPrefix();
      const shardList = await shardUrls();
      const a = await RedisBus.connect(url, { prefix, shardUrls: shardList });
      const b = await RedisBus.connect(url, { prefix, shardUrls: shardList });
      opened.push(a, b);
      return [a, b];
    },
  },
];

const topic = () => `session:${randomBytes(6).toString('hex')}`;

/** Collects payloads; `until(n)` resolves when n arrived, rejects after a timeout. */
function collector() {
  const got: Uint8Array[] = [];
  let want = Infinity;
  let wake: (() => void) | undefined;
  return {
    got,
    handler: (p: Uint8Array) => {
      got.push(Uint8Array.from(p));
      if (got.length >= want) wake?.();
    },
    until(n: number, ms = 3000): Promise<void> {
      if (got.length >= n) return Promise.resolve();
      want = n;
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`got ${got.length} of ${n} messages`)), ms);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    },
  };
}

const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));
const bytes = (s: string) => new TextEncoder().encode(s);

for (const impl of impls) {
  describe(`Bus contract: ${impl.name}`, { skip: impl.skip }, () => {
    test('delivers a publish to a subscriber, and nothing from other topics', async () => {
      const [a] = await impl.nodes();
      const t = topic();
      const c = collector();
      a.subscribe(t, c.handler);
      await a.ready();
      a.publish(topic(), bytes('elsewhere'));
      a.publish(t, bytes('hello'));
      await c.until(1);
      await settle();
      assert.deepEqual(c.got.map((g) => Buffer.from(g).toString()), ['hello']);
    });

    test('a publish right after subscribe on the same node is delivered', async () => {
      const [a] = await impl.nodes();
      const t = topic();
      const c = collector();
      a.subscribe(t, c.handler);
      a.publish(t, bytes('immediately'));
      await c.until(1);
      assert.equal(Buffer.from(c.got[0]).toString(), 'immediately');
    });

    test('unsubscribe stops delivery to that handler only', async () => {
      const [a] = await impl.nodes();
      const t = topic();
      const one = collector();
      const two = collector();
      const off1 = a.subscribe(t, one.handler);
      a.subscribe(t, two.handler);
      await a.ready();
      a.publish(t, bytes('1'));
      await Promise.all([one.until(1), two.until(1)]);
      off1();
      off1(); // idempotent
      a.publish(t, bytes('2'));
      await two.until(2);
      await settle();
      assert.equal(one.got.length, 1);
      assert.deepEqual(two.got.map((g) => Buffer.from(g).toString()), ['1', '2']);
    });

    test('a handler that throws does not stop delivery to the others', async () => {
      const [a] = await impl.nodes();
      const t = topic();
      const c = collector();
      a.subscribe(t, () => {
        throw new Error('boom');
      });
      a.subscribe(t, c.handler);
      await a.ready();
      a.publish(t, bytes('x'));
      await c.until(1);
    });

    test('binary payloads arrive byte for byte (every byte value, NULs, 1 MiB, MessagePack)', async () => {
      const [a, b] = await impl.nodes();
      const t = topic();
      const c = collector();
      b.subscribe(t, c.handler);
      await b.ready();
      const all = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
      const big = randomBytes(1024 * 1024);
      // A view into a larger buffer: only the viewed bytes may travel.
      const backing = randomBytes(64);
      const view = new Uint8Array(backing.buffer, backing.byteOffset + 8, 16);
      a.publish(t, all);
      a.publish(t, new Uint8Array(0));
      a.publish(t, big);
      a.publish(t, view);
      await c.until(4);
      assert.deepEqual(c.got[0], all);
      assert.equal(c.got[1].byteLength, 0);
      assert.ok(Buffer.from(c.got[2]).equals(big));
      assert.deepEqual(c.got[3], Uint8Array.from(view));

      const objs: unknown[] = [];
      const off = subscribeObj(b, t + ':obj', (m) => objs.push(m));
      await b.ready();
      const msg = { t: 'run.delta', runId: 'run_1', text: 'héllo ✓ \u0000', n: 2 ** 40, bin: new Uint8Array([0, 255, 7]), nested: [null, true, 1.5] };
      publishObj(a, t + ':obj', msg);
      await eventually(async () => objs.length > 0 || undefined, 15_000, 20);
      off();
      assert.deepEqual(objs, [msg]);
    });

    test('per-topic order is kept (1000 messages, two publishing nodes each in order)', async () => {
      const [a, b] = await impl.nodes();
      const t = topic();
      const c = collector();
      b.subscribe(t, c.handler);
      await b.ready();
      for (let i = 0; i < 1000; i++) (i % 2 ? b : a).publish(t, bytes(`${i % 2 ? 'b' : 'a'}${i}`));
      await c.until(1000, 10_000);
      const seq = c.got.map((g) => Buffer.from(g).toString());
      for (const who of ['a', 'b']) {
        const mine = seq.filter((s) => s[0] === who).map((s) => Number(s.slice(1)));
        assert.deepEqual(mine, [...mine].sort((x, y) => x - y), `order from node ${who}`);
        assert.equal(mine.length, 500);
      }
    });

    test('onReconnect: registering and unregistering is allowed; an ordinary publish does not call it', async () => {
      const [a, b] = await impl.nodes();
      let calls = 0;
      const off = a.onReconnect(() => calls++);
      const offB = b.onReconnect(() => calls++);
      const t = topic();
      const c = collector();
      b.subscribe(t, c.handler);
      await b.ready();
      a.publish(t, bytes('x'));
      await c.until(1);
      await settle();
      off();
      off();
      offB();
      assert.equal(calls, 0);
    });

    test('fan-out: one publish reaches subscribers on both nodes, the publishing node included', async () => {
      const [a, b] = await impl.nodes();
      const t = topic();
      const onA = collector();
      const onB = collector();
      const onB2 = collector();
      a.subscribe(t, onA.handler);
      b.subscribe(t, onB.handler);
      b.subscribe(t, onB2.handler);
      await Promise.all([a.ready(), b.ready()]);
      a.publish(t, bytes('from-a'));
      b.publish(t, bytes('from-b'));
      await Promise.all([onA.until(2), onB.until(2), onB2.until(2)]);
      await settle();
      for (const c of [onA, onB, onB2]) assert.deepEqual(c.got.map((g) => Buffer.from(g).toString()), ['from-a', 'from-b']);
    });
  });
}

describe('RedisBus specifics', { skip: 'skip' in redis ? redis.skip : undefined }, () => {
  test('a topic is SUBSCRIBEd once per node, and UNSUBSCRIBEd when its last handler leaves', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const b = await RedisBus.connect(url, { prefix });
    const probe = new Redis(url);
    try {
      const t = topic();
      const numsub = async () => Number(((await probe.pubsub('NUMSUB', prefix + t)) as [string, number])[1]);
      const offs = [a.subscribe(t, () => {}), a.subscribe(t, () => {}), a.subscribe(t, () => {})];
      await a.ready();
      assert.equal(await numsub(), 1);
      const offB = b.subscribe(t, () => {});
      await b.ready();
      assert.equal(await numsub(), 2);
      offs[0]();
      offs[1]();
      await a.ready();
      assert.equal(await numsub(), 2);
      offs[2]();
      offB();
      await Promise.all([a.ready(), b.ready()]);
      assert.equal(await numsub(), 0);
    } finally {
      probe.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('the topics subscribed in one turn go out in one SUBSCRIBE; one dropped in the same turn is never sent', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const probe = new Redis(url);
    const sub = a.connections().sub;
    const calls: string[][] = [];
    const real = sub.subscribe.bind(sub);
    sub.subscribe = ((...chans: string[]) => (calls.push(chans), real(...chans))) as typeof sub.subscribe;
    try {
      const ts = [topic(), topic(), topic()];
      const got: string[] = [];
      ts.forEach((t) => a.subscribe(t, () => got.push(t)));
      const dropped = topic();
      a.subscribe(dropped, () => got.push(dropped))();
      for (const t of [...ts, dropped]) a.publish(t, new Uint8Array([1])); // held until the SUBSCRIBE is acknowledged
      await a.ready();
      assert.deepEqual(calls, [ts.map((t) => prefix + t)]);
      await eventually(async () => got.length >= ts.length || undefined, 15_000, 20);
      await settle(300);
      assert.deepEqual(got, ts);
      assert.equal(Number(((await probe.pubsub('NUMSUB', prefix + dropped)) as [string, number])[1]), 0);
    } finally {
      probe.disconnect();
      await a.close();
    }
  });

  test('the topics left in one turn go out in one UNSUBSCRIBE; one taken back in the same turn stays subscribed', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const b = await RedisBus.connect(url, { prefix });
    const probe = new Redis(url);
    const sub = a.connections().sub;
    const calls: string[][] = [];
    const real = sub.unsubscribe.bind(sub);
    sub.unsubscribe = ((...chans: string[]) => (calls.push(chans), real(...chans))) as typeof sub.unsubscribe;
    try {
      const ts = Array.from({ length: 20 }, () => topic());
      const kept = topic();
      const offs = ts.map((t) => a.subscribe(t, () => {}));
      const got: string[] = [];
      const offKept = a.subscribe(kept, () => {});
      await a.ready();
      // A mass disconnect: every host topic of the node left in one turn; one of them taken back at once.
      offs.forEach((off) => off());
      offKept();
      a.subscribe(kept, () => got.push('kept'));
      await a.ready();
      assert.deepEqual(calls, [ts.map((t) => prefix + t)], 'one UNSUBSCRIBE for the twenty, none for the topic taken back');
      const numsub = async (t: string) => Number(((await probe.pubsub('NUMSUB', prefix + t)) as [string, number])[1]);
      assert.deepEqual(await Promise.all(ts.map(numsub)), ts.map(() => 0));
      assert.equal(await numsub(kept), 1);
      b.publish(kept, new Uint8Array([1]));
      await eventually(async () => got.length === 1 || undefined, 5000, 10);
    } finally {
      probe.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('the publishes of one turn reach Redis in one socket write, in order, with bytes the caller reuses at once', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const b = await RedisBus.connect(url, { prefix });
    const stream = a.connections().pub.socket as unknown as { write: (...x: unknown[]) => boolean };
    const realWrite = stream.write.bind(stream);
    let writes = 0;
    stream.write = (...x: unknown[]) => (writes++, realWrite(...x));
    try {
      const t = topic();
      const got = collector();
      b.subscribe(t, got.handler);
      await b.ready();
      // One buffer reused for every publish, as a transport's receive buffer is: each publish must keep its own bytes.
      const shared = new Uint8Array(4);
      for (let i = 0; i < 50; i++) {
        new DataView(shared.buffer).setUint32(0, i);
        a.publish(t, shared);
      }
      shared.fill(255);
      await got.until(50);
      assert.equal(writes, 1, 'fifty publishes of one turn are one write to the socket');
      assert.deepEqual(got.got.map((p) => new DataView(p.buffer, p.byteOffset).getUint32(0)), Array.from({ length: 50 }, (_, i) => i));
    } finally {
      stream.write = realWrite;
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('a publish made just before close is still sent', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const b = await RedisBus.connect(url, { prefix });
    try {
      const t = topic();
      const got = collector();
      b.subscribe(t, got.handler);
      await b.ready();
      a.publish(t, bytes('last words'));
      await a.close();
      await got.until(1);
      assert.equal(Buffer.from(got.got[0]).toString(), 'last words');
    } finally {
      await b.close();
    }
  });

  test('buses with different prefixes do not meet (hubs sharing one Redis)', async () => {
    const url = (redis as { url: string }).url;
    const a = await RedisBus.connect(url, { prefix: testPrefix() });
    const b = await RedisBus.connect(url, { prefix: testPrefix() });
    try {
      const got: Uint8Array[] = [];
      b.subscribe('auth', (p) => got.push(p));
      await b.ready();
      a.publish('auth', bytes('x'));
      await settle(200);
      assert.equal(got.length, 0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('onReconnect runs after a dropped connection comes back, subscriptions active again; a dropped command connection tells every node', async () => {
    const url = (redis as { url: string }).url;
    const prefix = testPrefix();
    const a = await RedisBus.connect(url, { prefix });
    const b = await RedisBus.connect(url, { prefix });
    const probe = new Redis(url);
    // Kills one of a bus's two connections by its address, as a network failure would.
    const kill = (bus: RedisBus, which: 'sub' | 'client') => {
      const s = which === 'sub' ? bus.connections().sub.socket! : bus.client.stream;
      return probe.client('KILL', 'ADDR', `${s.localAddress}:${s.localPort}`);
    };
    try {
      const t = topic();
      const c = collector();
      a.subscribe(t, c.handler);
      await a.ready();
      let onA = 0;
      let onB = 0;
      a.onReconnect(() => {
        onA++;
        // Called once the subscriptions are back: a publish now is delivered.
        b.publish(t, bytes(`after-${onA}`));
      });
      b.onReconnect(() => onB++);

      await kill(a, 'sub');
      await c.until(1, 5000);
      assert.equal(Buffer.from(c.got[0]).toString(), 'after-1');
      assert.equal(onA, 1);
      assert.equal(onB, 0, "another node's subscriber connection did not drop");

      await kill(a, 'client');
      await eventually(async () => (onB > 0 && onA >= 2) || undefined, 15_000, 50);
      assert.equal(onB, 1, "node A's publishes may have been lost: node B resynchronises too");
      assert.ok(onA >= 2);
    } finally {
      probe.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('connect rejects when Redis is unreachable', async () => {
    await assert.rejects(RedisBus.connect('redis://127.0.0.1:1', { connectTimeoutMs: 500 }));
  });
});
