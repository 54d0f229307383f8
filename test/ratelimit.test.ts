// Rate limits: the limiter contract (in process and Redis), the bucket rules,
// and the 429 over real HTTP with both backends. Redis parts skip with a
// reason when REDIS_URL is missing.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MemoryLimiter, type Limiter } from '../src/ratelimit/limiter.js';
import { RedisLimiter } from '../src/ratelimit/redis.js';
import { bucketsFor, clientIp, rateHeaders } from '../src/ratelimit/policy.js';
import { RedisBus } from '../src/bus/redis.js';
import type { Config } from '../src/config.js';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';

const redis = await redisUrlOrSkip();
const redisSkip = 'skip' in redis ? redis.skip : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uniq = () => randomBytes(5).toString('hex');

const limiters: Array<{ name: string; skip?: string; make(): Promise<Limiter> }> = [
  { name: 'MemoryLimiter', make: async () => new MemoryLimiter() },
  {
    name: 'RedisLimiter',
    skip: redisSkip,
    async make() {
      const bus = await RedisBus.connect(redisUrl!, { prefix: testPrefix() });
      cleanup.push(() => bus.close());
      return new RedisLimiter(bus.client, (k) => bus.key(k));
    },
  },
];

for (const L of limiters) {
  describe(`limiter contract: ${L.name}`, { skip: L.skip }, () => {
    test('counts to the limit, refuses the next without counting it, opens again after the window', async () => {
      const lim = await L.make();
      // Counted within a window no stall of this machine ends; the window's end is shown on a short one below.
      const b = { key: `k:${uniq()}`, limit: 3, windowMs: 60_000 };
      for (let i = 1; i <= 3; i++) {
        const v = await lim.hit([b]);
        assert.equal(v.allowed, true);
        assert.equal(v.states[0].count, i);
        assert.ok(v.states[0].resetMs > 0 && v.states[0].resetMs <= 60_000);
      }
      const refused = await lim.hit([b]);
      assert.equal(refused.allowed, false);
      assert.equal(refused.states[0].count, 3, 'a refusal is not counted');
      // A full 400-ms window: once it is over (a late wake-up only makes it surer), the key counts from nothing.
      const short = { key: `s:${uniq()}`, limit: 2, windowMs: 400 };
      const first = await lim.hit([short]);
      assert.deepEqual([first.allowed, first.states[0].count], [true, 1]);
      assert.ok(first.states[0].resetMs > 0 && first.states[0].resetMs <= 400, `resets within its window: ${first.states[0].resetMs}`);
      await sleep(450);
      const again = await lim.hit([short]);
      assert.equal(again.allowed, true);
      assert.equal(again.states[0].count, 1);
      lim.close();
    });

    test('several buckets: one full bucket refuses the request and the others are not charged', async () => {
      const lim = await L.make();
      const wide = { key: `w:${uniq()}`, limit: 100, windowMs: 60_000 };
      const narrow = { key: `n:${uniq()}`, limit: 1, windowMs: 60_000 };
      assert.equal((await lim.hit([wide, narrow])).allowed, true);
      const v = await lim.hit([wide, narrow]);
      assert.equal(v.allowed, false);
      assert.deepEqual(v.states.map((s) => s.count), [1, 1]);
      assert.equal((await lim.hit([wide])).states[0].count, 2);
      lim.close();
    });

    test('concurrent hits never exceed the limit', async () => {
      const lim = await L.make();
      const b = { key: `c:${uniq()}`, limit: 25, windowMs: 60_000 };
      const vs = await Promise.all(Array.from({ length: 60 }, () => lim.hit([b])));
      assert.equal(vs.filter((v) => v.allowed).length, 25);
      lim.close();
    });
  });
}

describe('bucket rules', () => {
  const cfg = { rateLimitPerMinute: 10, rateLimitPerIpPerMinute: 20, rateLimitPhoneCodePerHour: 5, rateLimitModelTestPerMinute: 3, rateLimitAiFillPerMinute: 4, trustProxy: false };
  const keyUser = { userId: 'u1', name: 'a', role: 'user' as const, via: 'key' as const, keyId: 'k1' };
  const jwtUser = { userId: 'u1', name: 'a', role: 'user' as const, via: 'jwt' as const };
  const get = { method: 'GET' as const, path: '/api/v1/me' };

  test('an API key is counted per key, a JWT per account, an anonymous caller per IP; every request per IP', () => {
    assert.deepEqual(bucketsFor(cfg, get, keyUser, '1.2.3.4').map((b) => [b.key, b.limit, b.windowMs]), [['rl:key:k1', 10, 60_000], ['rl:ip:1.2.3.4', 20, 60_000]]);
    assert.equal(bucketsFor(cfg, get, jwtUser, '1.2.3.4')[0].key, 'rl:user:u1');
    assert.equal(bucketsFor(cfg, get, undefined, '1.2.3.4')[0].key, 'rl:anon:1.2.3.4');
  });

  test('the phone-code and model-test endpoints add a tighter per-account bucket; 0 disables a limit', () => {
    const phone = bucketsFor(cfg, { method: 'POST', path: '/api/v1/me/phone/send-code' }, keyUser, 'ip');
    assert.deepEqual(phone[2], { key: 'rl:phone-code:user:u1', limit: 5, windowMs: 3_600_000 });
    const mt = bucketsFor(cfg, { method: 'POST', path: '/api/v1/model-configs/test' }, jwtUser, 'ip');
    assert.deepEqual(mt[2], { key: 'rl:model-test:user:u1', limit: 3, windowMs: 60_000 });
    const fill = bucketsFor(cfg, { method: 'POST', path: '/api/v1/agents/ai-fill' }, keyUser, 'ip');
    assert.deepEqual(fill[2], { key: 'rl:ai-fill:user:u1', limit: 4, windowMs: 60_000 }, 'ai-fill calls a model: per account');
    assert.equal(bucketsFor({ ...cfg, rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 }, get, keyUser, 'ip').length, 0);
    assert.equal(bucketsFor({ ...cfg, rateLimitModelTestPerMinute: 0 }, { method: 'POST', path: '/api/v1/model-configs/test' }, keyUser, 'ip').length, 2);
  });

  test('X-Forwarded-For counts only behind a trusted proxy, and then its last entry', () => {
    const req = { ip: '10.0.0.2', headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' } };
    assert.equal(clientIp(req, false), '10.0.0.2');
    assert.equal(clientIp(req, true), '203.0.113.9');
    assert.equal(clientIp({ ip: '10.0.0.2', headers: {} }, true), '10.0.0.2');
    // Whatever the proxy passes on, the key it makes stays short.
    assert.equal(clientIp({ ip: '10.0.0.2', headers: { 'x-forwarded-for': 'x'.repeat(5000) } }, true), 'x'.repeat(64));
  });

  test('headers name the refusing bucket, else the one with least room', () => {
    const now = 1_700_000_000_000;
    const a = { bucket: { key: 'a', limit: 10, windowMs: 60_000 }, count: 9, resetMs: 5_500 };
    const b = { bucket: { key: 'b', limit: 100, windowMs: 60_000 }, count: 5, resetMs: 30_000 };
    assert.deepEqual(rateHeaders([b, a], true, now), { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': String(Math.ceil((now + 5_500) / 1000)) });
    const full = { ...a, count: 10 };
    assert.deepEqual(rateHeaders([b, full], false, now)['Retry-After'], '6');
  });
});

const backends: Array<{ name: string; skip?: string; overrides(): Partial<Config> }> = [
  { name: 'in process', overrides: () => ({}) },
  { name: 'Redis', skip: redisSkip, overrides: () => ({ redisUrl, redisPrefix: testPrefix() }) },
];

for (const B of backends) {
  describe(`429 over HTTP (${B.name})`, { skip: B.skip }, () => {
    const hubs: TestHub[] = [];
    after(async () => {
      for (const h of hubs) await h.close();
    });
    const hub = async (o: Partial<Config>) => {
      const h = await startTestHub({ ...B.overrides(), ...o });
      hubs.push(h);
      return h;
    };

    test('per API key: the request past the limit gets the 429 envelope with Retry-After and X-RateLimit-*', async () => {
      const t = await hub({ rateLimitPerMinute: 4, rateLimitPerIpPerMinute: 0 });
      assert.equal(t.hub.ctx.bus.kind, B.name === 'Redis' ? 'redis' : 'local');
      const u = await t.user(); // the admin's request that created u used one of the admin key's 4
      for (let i = 0; i < 4; i++) {
        const ok = await t.api('GET', '/api/v1/me', { token: u.key });
        assert.equal(ok.status, 200);
        // Successful answers carry the counters too.
        assert.equal(ok.headers.get('x-ratelimit-limit'), '4');
        assert.equal(ok.headers.get('x-ratelimit-remaining'), String(3 - i));
      }
      const before = Math.floor(Date.now() / 1000);
      const r = await t.api('GET', '/api/v1/me', { token: u.key });
      assert.equal(r.status, 429);
      assert.deepEqual([r.body.code, r.body.data], ['4290', null]);
      assert.equal(typeof r.body.message, 'string');
      const retry = Number(r.headers.get('retry-after'));
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      assert.equal(r.headers.get('x-ratelimit-limit'), '4');
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      assert.ok(reset >= before && reset <= before + 61, `X-RateLimit-Reset ${reset}`);
      // Another key of another account is counted on its own.
      const v = await t.user();
      assert.equal((await t.api('GET', '/api/v1/me', { token: v.key })).status, 200);
    });

    test('per IP: callers with different keys share their address limit; anonymous callers count too', async () => {
      const t = await hub({ rateLimitPerMinute: 100, rateLimitPerIpPerMinute: 8 });
      const a = await t.user();
      const b = await t.user(); // 2 requests used
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const r = i === 6 ? await t.api('GET', '/api/v1/health') : await t.api('GET', '/api/v1/me', { token: i % 2 ? a.key : b.key });
        statuses.push(r.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);
    });

    test('behind a trusted proxy each forwarded client has its own limit; otherwise the header is ignored', async () => {
      const trusted = await hub({ rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 2, trustProxy: true });
      const from = (ip: string) => trusted.api('GET', '/api/v1/health', { headers: { 'x-forwarded-for': `9.9.9.9, ${ip}` } });
      const ip1 = `198.51.100.${1 + (randomBytes(1)[0] % 200)}`;
      const ip2 = `203.0.113.${1 + (randomBytes(1)[0] % 200)}`;
      assert.deepEqual([(await from(ip1)).status, (await from(ip1)).status, (await from(ip1)).status], [200, 200, 429]);
      assert.equal((await from(ip2)).status, 200);

      const direct = await hub({ rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 2, trustProxy: false });
      const spoof = (ip: string) => direct.api('GET', '/api/v1/health', { headers: { 'x-forwarded-for': ip } });
      assert.deepEqual([(await spoof('1.1.1.1')).status, (await spoof('2.2.2.2')).status, (await spoof('3.3.3.3')).status], [200, 200, 429]);
    });

    test('POST /model-configs/test has a tighter limit, per account across its keys', async () => {
      const t = await hub({ rateLimitPerMinute: 100, rateLimitPerIpPerMinute: 0, rateLimitModelTestPerMinute: 2 });
      const u = await t.user();
      const k2 = await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: 'second' } });
      assert.equal(k2.status, 201);
      const probe = (token: string) => t.api('POST', '/api/v1/model-configs/test', { token, body: { id: 'mc-does-not-exist' } });
      const s1 = (await probe(u.key)).status;
      const s2 = (await probe(k2.body.data.key)).status;
      assert.notEqual(s1, 429);
      assert.notEqual(s2, 429);
      const r = await probe(u.key);
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('x-ratelimit-limit'), '2');
      assert.ok(Number(r.headers.get('retry-after')) <= 60);
      // Other endpoints are not affected by the tight bucket.
      assert.equal((await t.api('GET', '/api/v1/me', { token: u.key })).status, 200);
    });

    test('a tighter limit holds with the general limits turned off', async () => {
      const t = await hub({ rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, rateLimitModelTestPerMinute: 2 });
      const u = await t.user();
      const probe = () => t.api('POST', '/api/v1/model-configs/test', { token: u.key, body: { id: 'mc-does-not-exist' } });
      const statuses = [(await probe()).status, (await probe()).status, (await probe()).status];
      assert.deepEqual(statuses.map((x) => x === 429), [false, false, true], statuses.join(','));
      assert.equal((await t.api('GET', '/api/v1/me', { token: u.key })).headers.get('x-ratelimit-limit'), null, 'nothing else is counted');
    });
  });
}

describe('RedisLimiter leases: most requests counted without a round trip, never more than the limit across nodes', { skip: redisSkip }, () => {
  /** A limiter on its own connection (a node), and how many times it called Redis. */
  async function node(prefix: string) {
    const bus = await RedisBus.connect(redisUrl!, { prefix });
    cleanup.push(() => bus.close());
    const client = bus.client as any;
    const lim = new RedisLimiter(bus.client, (k) => bus.key(k));
    cleanup.push(() => lim.close());
    const calls = { n: 0 };
    const orig = client.hubRateLimitLease.bind(client);
    client.hubRateLimitLease = (...a: unknown[]) => (calls.n++, orig(...a));
    return { lim, calls };
  }

  test('a lease of a fiftieth of the limit is spent in process, synchronously, with the count the headers need', async () => {
    const { lim, calls } = await node(testPrefix());
    const b = { key: `l:${uniq()}`, limit: 600, windowMs: 60_000 };
    let sync = 0;
    for (let i = 1; i <= 36; i++) {
      const r = lim.hit([b]);
      if (!(r instanceof Promise)) sync++;
      const v = await r;
      assert.equal(v.allowed, true);
      assert.equal(v.states[0].count, i, 'the count is what this node admitted, not what it leased');
      assert.ok(v.states[0].resetMs > 0 && v.states[0].resetMs <= 60_000);
    }
    assert.equal(calls.n, 3, '36 requests, leases of 12: three round trips');
    assert.equal(sync, 33);
  });

  test('two nodes on one bucket admit no more than the limit together; a bucket full in Redis is refused without asking again', async () => {
    const prefix = testPrefix();
    const a = await node(prefix);
    const b = await node(prefix);
    const bucket = { key: `l:${uniq()}`, limit: 100, windowMs: 60_000 };
    let allowed = 0;
    for (let i = 0; i < 150; i++) if ((await (i % 2 ? b : a).lim.hit([bucket])).allowed) allowed++;
    assert.ok(allowed <= 100, `admitted ${allowed}`);
    assert.ok(allowed >= 100 - 1, `admitted ${allowed}: at most a lease less one (2 - 1) is stranded on the other node`);
    const before = a.calls.n + b.calls.n;
    for (let i = 0; i < 20; i++) {
      const v = (i % 2 ? b : a).lim.hit([bucket]);
      assert.ok(!(v instanceof Promise), 'refused in process');
      assert.equal(v.allowed, false);
    }
    assert.equal(a.calls.n + b.calls.n, before, 'no round trip for a bucket known full');
  });

  test('a lease ends with its window: what was leased is not carried into the next one', async () => {
    const { lim, calls } = await node(testPrefix());
    const b = { key: `l:${uniq()}`, limit: 500, windowMs: 300 };
    assert.equal((await lim.hit([b])).states[0].count, 1); // leased 10
    await sleep(350);
    const v = await lim.hit([b]);
    assert.equal(calls.n, 2, 'the second window asks Redis again');
    assert.equal(v.states[0].count, 1);
  });

  test('a hit Redis refuses while a concurrent one leased the last of the window here: spent here, and a refusal reads full', async () => {
    const prefix = testPrefix();
    const { lim } = await node(prefix);
    const bus = await RedisBus.connect(redisUrl!, { prefix });
    cleanup.push(() => bus.close());
    const b = { key: `l:${uniq()}`, limit: 100, windowMs: 60_000 }; // leases of 2
    await bus.client.set(bus.key(b.key), '98', 'PX', 60_000);
    // Both ask Redis: the first takes the last two, the second is refused there, but this node now holds one.
    const [x, y] = await Promise.all([lim.hit([b]), lim.hit([b])]);
    assert.deepEqual([x.allowed, y.allowed], [true, true], 'the lease the first took serves the second');
    const z = await lim.hit([b]);
    assert.equal(z.allowed, false);
    assert.ok(z.states[0].count >= b.limit, `a refusal reads full: ${z.states[0].count}`);
    // The headers of a refusal name the full bucket (rateHeaders picks a bucket at its limit).
    assert.equal(rateHeaders(z.states, false)['X-RateLimit-Remaining'], '0');
  });

  test('a refusal by one bucket gives back what the request took from the others', async () => {
    const { lim } = await node(testPrefix());
    const wide = { key: `w:${uniq()}`, limit: 1000, windowMs: 60_000 };
    const narrow = { key: `n:${uniq()}`, limit: 1, windowMs: 60_000 };
    assert.equal((await lim.hit([wide])).states[0].count, 1); // leased 20, spent 1
    assert.equal((await lim.hit([wide, narrow])).allowed, true);
    const v = await lim.hit([wide, narrow]);
    assert.equal(v.allowed, false);
    assert.deepEqual(v.states.map((s) => s.count), [2, 1]);
    assert.equal((await lim.hit([wide])).states[0].count, 3);
  });
});

describe('counted in Redis: two hub nodes share the counts', { skip: redisSkip }, () => {
  test('requests to node A and node B add up against one limit', async () => {
    const prefix = testPrefix();
    const a = await startTestHub({ redisUrl, redisPrefix: prefix, rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 4 });
    cleanup.push(() => a.close());
    const b = await startTestHub({ redisUrl, redisPrefix: prefix, rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 4 });
    cleanup.push(() => b.close());
    const seq = [a, b, a, b, a, b];
    const statuses: number[] = [];
    for (const h of seq) statuses.push((await h.api('GET', '/api/v1/health')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  });
});

describe('Redis away: the limits still hold, counted on each node', () => {
  // A limiter whose Redis is down let every request through (fail open): a Redis outage lifted the
  // limits on sign-in attempts, credential guessing and paid SMS codes for as long as it lasted.
  test('a node whose Redis is not ready counts in process: the limit holds on this node', async () => {
    const { Redis } = await import('ioredis');
    const down = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false }); // never connected: status 'wait'
    const lim = new RedisLimiter(down, (k) => k);
    cleanup.push(() => (lim.close(), down.disconnect()));
    const b = { key: `o:${uniq()}`, limit: 3, windowMs: 60_000 };
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push((await lim.hit([b])).allowed);
    assert.deepEqual(seen, [true, true, true, false, false, false]);
  });

  test('a round trip that fails counts in process too', async () => {
    const { Redis } = await import('ioredis');
    const client = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false });
    const lim = new RedisLimiter(client, (k) => k);
    cleanup.push(() => (lim.close(), client.disconnect()));
    Object.defineProperty(client, 'status', { value: 'ready' }); // it says ready, the call fails
    (client as any).hubRateLimitLease = async () => { throw new Error('connection lost'); };
    const b = { key: `f:${uniq()}`, limit: 2, windowMs: 60_000 };
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push((await lim.hit([b])).allowed);
    assert.deepEqual(seen, [true, true, false, false]);
  });
});
