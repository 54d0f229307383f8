// Issue 10, hole 8: a flood of invalid credentials from one IP is answered
// 429 (with Retry-After) once its budget of failed checks is spent, on the
// HTTP API and on the host WebSocket upgrade, and a bad credential is cached
// as negative, so the flood costs at most one database lookup per distinct
// key. The lookups are counted by the authenticator and the host store.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';
import WebSocket from 'ws';
import { SignJWT } from 'jose';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, wsUrl, connectFakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';

const BUDGET = 12;
let t: TestHub;
before(async () => {
  // trustProxy: the test speaks for several client IPs through X-Forwarded-For. With Redis, the failures are counted there.
  const redis = await redisUrlOrSkip();
  t = await startTestHub({ authFailuresPerIpPerMinute: BUDGET, trustProxy: true, ...('url' in redis ? { redisUrl: redis.url, redisPrefix: testPrefix() } : {}) });
});
after(async () => {
  await t.close();
});

const randomKey = () => 'ahk_' + randomBytes(24).toString('hex');
const randomHostCredential = () => 'ahh_' + randomBytes(24).toString('hex');
const get = (token: string, ip: string) => t.api('GET', '/api/v1/me', { token, headers: { 'x-forwarded-for': ip } });

/** The status of a host WebSocket upgrade and its Retry-After, when refused. */
function upgrade(credential: string, ip: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(t.url), { headers: { authorization: `Bearer ${credential}`, 'x-forwarded-for': ip }, perMessageDeflate: false });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined });
      ws.terminate();
    });
    ws.once('open', () => {
      resolve({ status: 101 });
      ws.close();
    });
    ws.once('error', (e) => reject(e));
  });
}

test('random API keys: 401 until the per-IP budget is spent, then 429 with Retry-After; one lookup per distinct key', async () => {
  const ip = '203.0.113.7';
  const u = await t.user();
  const lookups0 = t.hub.auth?.dbLookups;
  // Each of a few keys twice: the second try of a key is served by the negative cache.
  const few = Array.from({ length: 4 }, randomKey);
  for (const k of [...few, ...few]) assert.equal((await get(k, ip)).status, 401);
  const afterFew = t.hub.auth?.dbLookups - lookups0;

  const statuses: number[] = [];
  let retryAfter: string | null = null;
  for (let i = 0; i < 40; i++) {
    const r = await get(randomKey(), ip);
    statuses.push(r.status);
    if (r.status === 429) retryAfter ??= r.headers.get('retry-after');
  }
  const firstRefusal = statuses.indexOf(429);
  assert.equal(firstRefusal, BUDGET - 2 * few.length, `401 until the budget of ${BUDGET} failures is spent, then 429: ${statuses.join(',')}`);
  assert.ok(statuses.slice(firstRefusal).every((s) => s === 429), 'refused for the rest of the window');
  assert.ok(retryAfter && Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After: ${retryAfter}`);
  assert.equal(afterFew, few.length, 'a repeated bad key costs no second database lookup');
  assert.ok(t.hub.auth.dbLookups - lookups0 <= BUDGET, `at most one lookup per counted failure (${t.hub.auth.dbLookups - lookups0})`);

  const blocked = await get(randomKey(), ip);
  assert.equal(blocked.status, 429);
  assert.equal(blocked.body.code, '4290');

  // Another IP is not affected, and a good key from it works.
  assert.equal((await get(u.key, '198.51.100.9')).status, 200);
  assert.equal((await get(randomKey(), '198.51.100.9')).status, 401);
  // Forged JWTs count as failures too (no database lookup, but a CPU-bound check).
  const jwtIp = '198.51.100.77';
  const jwt = () => `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${Buffer.from(JSON.stringify({ sub: 'x', sid: 'y' })).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  const js: number[] = [];
  for (let i = 0; i < BUDGET + 3; i++) js.push((await get(jwt(), jwtIp)).status);
  assert.deepEqual(js, [...Array(BUDGET).fill(401), 429, 429, 429]);
});

test('an expired login token is a real one that aged, not a guess: refused 4011 every time, never counted', async () => {
  const u = await t.user();
  const ip = '198.51.100.88';
  const expired = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id).setIssuer('agent-hub')
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(t.hub.ctx.secrets.jwtKey);
  const codes: string[] = [];
  for (let i = 0; i < BUDGET + 3; i++) {
    const r = await get(expired, ip);
    codes.push(`${r.status} ${r.body.code}`);
  }
  assert.deepEqual(codes, Array(BUDGET + 3).fill('401 4011'));
  assert.equal((await get(u.key, ip)).status, 200, 'the address keeps its budget');
});

test('random host credentials on the WebSocket upgrade: 401 until the budget is spent, then 429; one lookup per distinct credential', async () => {
  const ip = '203.0.113.50';
  const u = await t.user();
  const good = await pairHost(t, u.key, 'good');
  const lookups0 = t.hub.hostStore?.dbLookups;
  const few = Array.from({ length: 3 }, randomHostCredential);
  for (const c of [...few, ...few]) assert.equal((await upgrade(c, ip)).status, 401);
  const afterFew = t.hub.hostStore?.dbLookups - lookups0;

  const statuses: number[] = [];
  let retryAfter: string | undefined;
  for (let i = 0; i < 30; i++) {
    const r = await upgrade(randomHostCredential(), ip);
    statuses.push(r.status);
    if (r.status === 429) retryAfter ??= r.retryAfter;
  }
  const firstRefusal = statuses.indexOf(429);
  assert.equal(firstRefusal, BUDGET - 2 * few.length, statuses.join(','));
  assert.ok(statuses.slice(firstRefusal).every((s) => s === 429));
  assert.ok(retryAfter && Number(retryAfter) >= 1, `Retry-After: ${retryAfter}`);
  assert.equal(afterFew, few.length, 'a repeated bad credential costs no second database lookup');
  assert.ok(t.hub.hostStore.dbLookups - lookups0 <= BUDGET);

  // The HTTP heartbeat of a host (same credential kind) shares the budget of that IP.
  const hb = await t.api('POST', '/api/v1/hosts/heartbeat', { token: randomHostCredential(), body: {}, headers: { 'x-forwarded-for': ip } });
  assert.equal(hb.status, 429);

  // A good host from another address still connects.
  const fake = await connectFakeHost(t, good.credential);
  fake.close();
  assert.equal((await upgrade(randomHostCredential(), '198.51.100.10')).status, 401);
});

test('a client that leaves before its bad key is looked up is still counted against its own address', { skip: process.env.DATABASE_URL ? false : 'needs a second database connection to hold the lookup (PostgreSQL)' }, async () => {
  // No proxy: the budget is counted against the socket's address, which the hub reads when it needs it.
  const h = await startTestHub({ authFailuresPerIpPerMinute: 3 });
  const holder = new pg.Client({ connectionString: h.config.databaseUrl });
  await holder.connect();
  try {
    // Hold every key lookup until the clients below have gone.
    await holder.query('begin');
    await holder.query('lock table api_keys in access exclusive mode');
    const { port } = new URL(h.url);
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve, reject) => {
        const s = connect(Number(port), '127.0.0.1', () => {
          s.write(`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${randomKey()}\r\n\r\n`, () => {
            s.destroy();
            resolve();
          });
        });
        s.on('error', reject);
      });
    }
    await new Promise((r) => setTimeout(r, 300)); // the hub sees the three clients gone
    await holder.query('commit');
    // The three held lookups now fail and are counted; wait for that (the hub may be slow under load)
    // rather than guess a delay: a request sent before they land would be counted as a fourth.
    for (const end = Date.now() + 15_000; h.hub.failedAuth.blockedAddresses === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.hub.failedAuth.blockedAddresses, 1, 'the three failures spent one address\'s budget');
    // They landed against 127.0.0.1, not against "no address": the next bad key from here is refused.
    const status = (await h.api('GET', '/api/v1/me', { token: randomKey() })).status;
    assert.equal(status, 429);
  } finally {
    await holder.end().catch(() => undefined);
    await h.close();
  }
});
