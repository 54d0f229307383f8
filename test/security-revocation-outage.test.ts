// Issue 10, hole 7: a revocation made while Redis is unreachable is never
// lost. Two hubs share one PostgreSQL database and a Redis server this test
// starts on a spare port (and kills and restarts; never the shared one). A
// key deleted or refreshed, a logout, a host deleted, a user deleted and a
// member removed from a shared agent on node A are refused by A at once, and
// by B within the cache TTL, or at once after B's bus reconnects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { connectFakeHost, pairHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { newId } from '../src/ids.js';
import { hashSecret } from '../src/accounts/keys.js';
import { signAccessToken } from '../src/accounts/tokens.js';
import { CloseCodes } from '../host-protocol/version.js';
import { ApiError } from '../src/client/index.js';
import { hasRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';

const skip = !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs share one PostgreSQL database)' : !hasRedisServer ? 'no redis-server binary to start a Redis this test may stop' : undefined;
if (skip) console.log(`# skipping the Redis outage tests: ${skip}`);

const SHORT_TTL_MS = 3000;
let redis: OwnRedis;
let a: TestHub;
let b: TestHub;
let dropDb: () => Promise<void> = async () => {};
/** Host channels a test opened for its agents (closed after). */
const hosts: FakeHost[] = [];

before(async () => {
  if (skip) return;
  redis = await ownRedis();
  await redis.start();
  const db = await createTestDatabase();
  dropDb = db.drop;
  const shared = { databaseUrl: db.url, redisUrl: redis.url, redisPrefix: `t${randomBytes(4).toString('hex')}:`, secretKey: 'outage-' + randomBytes(8).toString('hex'), authCacheTtlMs: SHORT_TTL_MS, hostHeartbeatTimeoutMs: 60_000 };
  a = await startTestHub({ ...shared, nodeId: 'outage-a' });
  b = await startTestHub({ ...shared, nodeId: 'outage-b', adminApiKey: a.adminKey });
});

after(async () => {
  if (skip) return;
  for (const h of hosts) h.close();
  if (redis && !redis.started) await redis.start().catch(() => undefined); // the hubs close cleanly with Redis up
  await b?.close().catch(() => undefined);
  await a?.close().catch(() => undefined);
  await redis?.kill();
  await dropDb();
});

/** 200 when the read answers, else the ApiError's status. */
const statusOf = (read: Promise<unknown>) =>
  read.then(() => 200, (e: unknown) => {
    if (e instanceof ApiError) return e.status;
    throw e;
  });
/** 200 when `token` still opens an authenticated read on `hub` (401 once revoked). */
const status = (hub: TestHub, token: string) => statusOf(hub.client(token).keys.list());
/** 200 when `token` reads agent `id` on `hub` (404 once it is not shared with the caller). */
const agentStatus = (hub: TestHub, token: string, id: string) => statusOf(hub.client(token).market.get(id));
const closeCode = (h: FakeHost, ms: number) => Promise.race([h.closed.then((c) => c.code), new Promise<string>((r) => setTimeout(() => r('still open'), ms))]);
const upgradeStatus = (hub: TestHub, credential: string) => connectFakeHost(hub, credential).then((h) => (h.close(), 101), (e: { status?: number }) => e.status);

interface Victims {
  deleted: string;
  refreshed: { old: string; id: string; owner: string };
  jwt: string;
  userKey: string;
  user: string;
  host: { hostId: string; credential: string; owner: string; channel: FakeHost };
  hostOfUser: FakeHost;
  /** A private agent of the owner's shared with `member` (a user whose membership is removed). */
  shared: { agentId: string; member: { id: string; key: string } };
}

/** Credentials and channels of every kind, all used on node B first so B has them cached. */
async function victims(): Promise<Victims> {
  const owner = await a.user();
  const second = await a.client(owner.key).keys.create('second');
  // A login (what the OIDC callback creates): a session row and an access token signed with the shared secret.
  const sid = newId('lgn');
  await a.hub.ctx.em().getConnection().execute(`insert into auth_sessions (id, user_id, refresh_hash, expires_at) values (?, ?, ?, now() + interval '1 day')`, [sid, owner.id, hashSecret(randomBytes(16).toString('hex'))]);
  const jwt = await signAccessToken(a.hub.ctx.secrets.jwtKey, { sub: owner.id, sid }, 900);
  const doomed = await a.user();
  const host = await pairHost(a, owner.key, 'deleted-host');
  const channel = await connectFakeHost(b, host.credential);
  const h2 = await pairHost(a, doomed.key, 'host-of-deleted-user');
  const hostOfUser = await connectFakeHost(b, h2.credential);
  const deleted = await a.client(owner.key).keys.create('to-delete');
  for (const tok of [owner.key, second.key, jwt, doomed.key, deleted.key]) assert.equal(await status(b, tok), 200, 'warm on B');
  // A share: its member's state (what is shared with it) is cached on B by a read there.
  const member = await a.user();
  const shareHost = await pairHost(a, owner.key, 'share-host');
  hosts.push(await connectFakeHost(a, shareHost.credential));
  const agent = await agentWhenReady(a.client(owner.key), { name: 'shared', scope: 'private', hostId: shareHost.hostId, engine: 'claude-code' }, 10_000);
  await a.client(member.key).invites.decide((await a.client(owner.key).agents.shareLink(agent.id)).token, true);
  assert.equal(await agentStatus(b, member.key, agent.id), 200, 'warm on B: the member reads the shared agent');
  return {
    deleted: deleted.key, refreshed: { old: second.key, id: second.id, owner: owner.key }, jwt, userKey: doomed.key, user: doomed.id, host: { ...host, owner: owner.key, channel }, hostOfUser,
    shared: { agentId: agent.id, member },
  };
}

/** On node A while Redis is down: every kind of revocation. */
async function revokeAll(v: Victims, deletedKeyId: string): Promise<void> {
  const owner = a.client(v.refreshed.owner);
  assert.deepEqual(await owner.keys.remove(deletedKeyId), { deleted: true });
  assert.equal((await owner.keys.refresh(v.refreshed.id)).id, v.refreshed.id);
  assert.deepEqual(await a.client(v.jwt).auth.logout(), { loggedOut: true });
  assert.deepEqual(await a.client(v.host.owner).hosts.remove(v.host.hostId), { deleted: true });
  assert.deepEqual(await a.admin.admin.deleteUser(v.user), { deleted: true });
  await owner.agents.removeMember(v.shared.agentId, v.shared.member.id);
}

async function keyIdOf(owner: string, name: string): Promise<string> {
  const { items } = await a.client(owner).keys.list();
  return items.find((k) => k.name === name)!.id;
}

async function refusedEverywhere(hub: TestHub, v: Victims): Promise<boolean> {
  for (const tok of [v.deleted, v.refreshed.old, v.jwt, v.userKey]) if ((await status(hub, tok)) !== 401) return false;
  if ((await agentStatus(hub, v.shared.member.key, v.shared.agentId)) !== 404) return false; // no longer shared with the member
  return (await upgradeStatus(hub, v.host.credential)) === 401;
}

test('revocations made while Redis is down: node A refuses at once, node B within the cache TTL', { skip }, async () => {
  const v = await victims();
  const deletedId = await keyIdOf(v.refreshed.owner, 'to-delete');
  await redis.kill();
  await eventually(async () => !a.hub.ctx.bus.healthy() && !b.hub.ctx.bus.healthy(), 10_000);

  const t0 = Date.now();
  await revokeAll(v, deletedId);
  assert.ok(await refusedEverywhere(a, v), 'node A refuses at once (it cleared its own caches, not on its echo)');
  await eventually(() => refusedEverywhere(b, v), SHORT_TTL_MS + 5000, 100);
  const codes = await Promise.all([closeCode(v.host.channel, SHORT_TTL_MS + 5000), closeCode(v.hostOfUser, SHORT_TTL_MS + 5000)]);
  assert.deepEqual(codes, [CloseCodes.HOST_DELETED.code, CloseCodes.HOST_DELETED.code], 'B closes the channels of the deleted host and of the deleted user');
  assert.ok(Date.now() - t0 < SHORT_TTL_MS + 5000, `B refused within the TTL (${Date.now() - t0} ms)`);

  await redis.start();
  await eventually(async () => a.hub.ctx.bus.healthy() && b.hub.ctx.bus.healthy(), 15_000);
});

test('revocations made while Redis is down: node B refuses at once after its bus reconnects', { skip }, async () => {
  // Caches that outlive this test: only the reconnect can explain B refusing.
  for (const h of [a, b]) h.config.authCacheTtlMs = 10 * 60_000;
  // The periodic check of live hosts armed with the short TTL fires once more, then waits the long one.
  await new Promise((r) => setTimeout(r, SHORT_TTL_MS + 500));
  const v = await victims();
  const deletedId = await keyIdOf(v.refreshed.owner, 'to-delete');
  // A host whose row goes with no word on the Bus at all (its deleting node died before its held publish went out).
  const silent = await pairHost(a, v.refreshed.owner, 'deleted-without-a-word');
  const silentChannel = await connectFakeHost(b, silent.credential);
  await redis.kill();
  await eventually(async () => !a.hub.ctx.bus.healthy() && !b.hub.ctx.bus.healthy(), 10_000);
  await revokeAll(v, deletedId);
  await a.hub.ctx.em().getConnection().execute(`delete from hosts where id = ?`, [silent.hostId]);
  assert.ok(await refusedEverywhere(a, v), 'node A refuses at once');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await status(b, v.deleted), 200, 'precondition: B still serves the deleted key from its cache while the bus is down');
  assert.equal(await agentStatus(b, v.shared.member.key, v.shared.agentId), 200, 'precondition: B still serves the share to the removed member from its cache');

  // B's reconnect, seen by a handler registered after the hub's own: when it runs, theirs have run.
  const reconnected = new Promise<void>((r) => {
    const off = b.hub.ctx.bus.onReconnect(() => (off(), r()));
  });
  await redis.start();
  await reconnected;
  // At once: not polled for, asked once right after the reconnect (however late this process gets to it).
  assert.ok(await refusedEverywhere(b, v), 'B refuses as soon as its bus has reconnected');
  // The channels go after a check of the live hosts (a query) the reconnect starts.
  const codes = await Promise.all([closeCode(v.host.channel, 3000), closeCode(v.hostOfUser, 3000), closeCode(silentChannel, 3000)]);
  assert.deepEqual(codes, [CloseCodes.HOST_DELETED.code, CloseCodes.HOST_DELETED.code, CloseCodes.HOST_DELETED.code], 'the host deleted without a word too: the reconnect checks the live hosts');
  await eventually(async () => b.hub.ctx.bus.healthy(), 15_000, 20);
});
