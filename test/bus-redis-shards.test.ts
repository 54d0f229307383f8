// The bus's keyed topics and the hosts' presence spread over more Redis
// instances (REDIS_SHARD_URLS, src/bus/redis.ts, src/hosts/presence-sharded.ts):
// a session's events and a node's host frames go to the instance their name
// hashes to, a host's presence entry to the one its id hashes to, plain topics
// stay on REDIS_URL's; every node must list the same instances in the same
// order; a shard lost and back makes every node resynchronise. Bus-level tests start Redis servers of their own
// (never the shared one); the two-hub test needs DATABASE_URL and REDIS_URL too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisBus, linkIndex, LAYOUT_TTL_MS } from '../src/bus/redis.js';
import { loadConfig, ConfigError } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { hasRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';
import { eventually, pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';
import { clusterSkipReason, startCluster, type Cluster } from './helpers/cluster.js';
import { openSse } from './helpers/sse.js';
import { presenceIn, ShardedPresence } from '../src/hosts/presence-sharded.js';
import { shardOf } from '../src/shard-hash.js';
import type { SessionView } from '../src/client/index.js';

const skip = hasRedisServer ? undefined : 'no redis-server binary to start Redis servers of these tests own';
const servers: OwnRedis[] = [];
const buses: RedisBus[] = [];
const probes: Redis[] = [];
after(async () => {
  await Promise.allSettled(buses.map((b) => b.close()));
  for (const p of probes) p.disconnect();
  await Promise.all(servers.map((s) => s.kill()));
});

async function server(): Promise<OwnRedis> {
  const s = await ownRedis();
  servers.push(s);
  await s.start();
  return s;
}

async function bus(url: string, shardUrls: string[], prefix = 'sh:'): Promise<RedisBus> {
  const b = await RedisBus.connect(url, { connectTimeoutMs: 2000, shardUrls, prefix });
  buses.push(b);
  return b;
}

function probe(url: string): Redis {
  const r = new Redis(url);
  probes.push(r);
  return r;
}

const channels = async (r: Redis, pattern: string) => ((await r.pubsub('CHANNELS', pattern)) as string[]).sort();

test('plain topics stay on the first instance; keyed ones spread evenly and always to the same shard', () => {
  assert.equal(linkIndex('auth', 3), 0);
  assert.equal(linkIndex('agents', 3), 0);
  assert.equal(linkIndex('session:abc', 0), 0, 'no shards: everything on the first');
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 3000; i++) counts[linkIndex(`session:${i.toString(36)}-x`, 3)]++;
  assert.equal(counts[0], 0);
  for (const c of counts.slice(1)) assert.ok(c > 850 && c < 1150, `about a third each: ${counts}`);
  assert.equal(linkIndex('hostframes:node-a', 3), linkIndex('hostframes:node-a', 3));
});

test('each keyed topic is subscribed on its shard only, plain topics on the first instance; publishes from another node arrive', { skip }, async () => {
  const [first, s1, s2] = [await server(), await server(), await server()];
  const shardUrls = [s1.url, s2.url];
  const a = await bus(first.url, shardUrls);
  const b = await bus(first.url, shardUrls);
  const topics = Array.from({ length: 100 }, (_, i) => `session:${i}`);
  const got = new Set<string>();
  for (const t of topics) b.subscribe(t, (p) => got.add(`${t}=${Buffer.from(p).toString()}`));
  b.subscribe('auth', (p) => got.add(`auth=${Buffer.from(p).toString()}`));
  await b.ready();
  const [onFirst, on1, on2] = await Promise.all([first, s1, s2].map((s) => channels(probe(s.url), 'sh:*')));
  assert.deepEqual(onFirst, ['sh:_bus:reconnected', 'sh:auth'], 'the first instance: plain topics and the announcements');
  const keyed = (list: string[]) => list.filter((c) => c.startsWith('sh:session:'));
  assert.ok(keyed(on1).length > 20 && keyed(on2).length > 20, `both shards carry sessions: ${keyed(on1).length} + ${keyed(on2).length}`);
  assert.equal(keyed(on1).length + keyed(on2).length, 100);
  for (const c of keyed(on1)) assert.equal(linkIndex(c.slice(3), 2), 1);
  assert.ok(on1.includes('sh:_bus:reconnected') && on2.includes('sh:_bus:reconnected'), 'announcements are read on every instance');
  for (const t of topics) a.publish(t, Buffer.from('x'));
  a.publish('auth', Buffer.from('y'));
  await eventually(async () => got.size === 101 || undefined, 5000, 10);
});

test('a node whose shards differ from the running nodes\' refuses to start; the list is forgotten after the last node', { skip }, async () => {
  const [first, s1, s2] = [await server(), await server(), await server()];
  await bus(first.url, [s1.url, s2.url], 'lay:');
  await assert.rejects(RedisBus.connect(first.url, { shardUrls: [s2.url, s1.url], prefix: 'lay:' }), /REDIS_SHARD_URLS: .*differ.*in the same order/);
  await assert.rejects(RedisBus.connect(first.url, { shardUrls: [], prefix: 'lay:' }), /this node's Redis shards \(none\)/);
  await assert.rejects(RedisBus.connect(first.url, { shardUrls: [s1.url], prefix: 'lay:' }), /REDIS_SHARD_URLS/);
  await bus(first.url, [s1.url, s2.url], 'lay:'); // the same list, in the same order: joins
  await bus(first.url, [], 'other:'); // another hub's prefix: its own layout
  const ttl = await probe(first.url).pttl('lay:bus:layout');
  assert.ok(ttl > 0 && ttl <= LAYOUT_TTL_MS, `kept while nodes live, forgotten ${LAYOUT_TTL_MS} ms after: ${ttl}`);
});

test('a running node that finds another shard list in Redis says so in its log; a Redis error is not taken for one', { skip }, async () => {
  const [first, s1] = [await server(), await server()];
  const lines: Array<{ level: string; msg: string; err?: string }> = [];
  const log = createLogger('info', {}, (l) => void lines.push(JSON.parse(l)));
  const b = await RedisBus.connect(first.url, { shardUrls: [s1.url], prefix: 'lr:', log, layoutRefreshMs: 100 });
  buses.push(b);
  const p = probe(first.url);
  // The key of another type: the refresh's GET fails with WRONGTYPE, a Redis error.
  await p.del('lr:bus:layout');
  await p.hset('lr:bus:layout', 'x', '1');
  await eventually(async () => lines.find((l) => l.msg === 'redis error' && /WRONGTYPE/.test(l.err ?? '')) || undefined, 5000, 20);
  assert.ok(!lines.some((l) => l.msg === 'redis shards differ between nodes'), JSON.stringify(lines));
  // A node started with another list while Redis had forgotten this one's: the next refresh finds it.
  await p.set('lr:bus:layout', '127.0.0.1:1', 'PX', 30_000);
  await eventually(async () => lines.find((l) => l.msg === 'redis shards differ between nodes') || undefined, 5000, 20);
  assert.match(lines.find((l) => l.msg === 'redis shards differ between nodes')!.err!, /127\.0\.0\.1:1/);
  // Whatever the key holds, the log line shows a bounded part of it.
  await p.set('lr:bus:layout', 'x'.repeat(100_000), 'PX', 30_000);
  const long = await eventually(async () => lines.find((l) => l.msg === 'redis shards differ between nodes' && /x…/.test(l.err ?? '')) || undefined, 5000, 20);
  assert.ok(long.err!.length < 1000, `${long.err!.length} characters`);
});

test('a shard lost and back: every node resynchronises and the shard\'s topics are delivered again', { skip }, async () => {
  const [first, s1, s2] = [await server(), await server(), await server()];
  const a = await bus(first.url, [s1.url, s2.url]);
  const b = await bus(first.url, [s1.url, s2.url]);
  // A topic on the second shard.
  let n = 0;
  while (linkIndex(`session:k${n}`, 2) !== 2) n++;
  const t = `session:k${n}`;
  const got: string[] = [];
  b.subscribe(t, (p) => got.push(Buffer.from(p).toString()));
  await b.ready();
  let resyncA = 0;
  let resyncB = 0;
  a.onReconnect(() => resyncA++);
  b.onReconnect(() => resyncB++);
  await s2.kill();
  await eventually(async () => (!a.healthy() && !b.healthy()) || undefined, 5000, 20);
  await s2.start();
  await eventually(async () => (a.healthy() && b.healthy() && resyncA > 0 && resyncB > 0) || undefined, 10_000, 20);
  a.publish(t, Buffer.from('after'));
  await eventually(async () => got.includes('after') || undefined, 5000, 10);
});

const entry = (nodeId: string | null, running = 1) => ({ nodeId, running, capacity: 3, engines: [{ id: 'claude-code', displayName: 'Claude Code' }], lastSeenAt: 1000 });

test('presence: each host\'s entry on the shard its id hashes to, none on the first instance; reads and writes across shards', { skip }, async () => {
  const [first, s1, s2] = [await server(), await server(), await server()];
  const [b1, b2] = [await bus(first.url, [s1.url, s2.url], 'pr:'), await bus(first.url, [s1.url, s2.url], 'pr:')];
  const [p1, p2] = [presenceIn(b1, 'n1'), presenceIn(b2, 'n2')];
  assert.ok(p1 instanceof ShardedPresence);
  const ids = Array.from({ length: 40 }, (_, i) => `hst_${i}`);
  await Promise.all(ids.map((id) => p1.set(id, entry('n1'), 60_000)));
  const keys = await Promise.all([first, s1, s2].map((s) => probe(s.url).keys('pr:presence:*')));
  assert.equal(keys[0].length, 0, 'nothing on the first instance');
  assert.equal(keys[1].length + keys[2].length, 40);
  for (const k of keys[1]) assert.equal(shardOf(k.slice('pr:presence:'.length), 2), 0);
  assert.ok(keys[1].length > 5 && keys[2].length > 5, `both shards hold hosts: ${keys[1].length} + ${keys[2].length}`);
  // Another node reads them all, in one call across both shards.
  const all = await p2.getMany([...ids, 'hst_none']);
  assert.deepEqual([...all.keys()].sort(), [...ids].sort());
  await p1.patch(ids[0], { running: 3 });
  assert.equal((await p2.get(ids[0]))!.running, 3);
  const ttls = async () => (await Promise.all([s1, s2].map((s) => Promise.all(ids.map((id) => probe(s.url).pttl(`pr:presence:${id}`)))))).map((l) => l.filter((t) => t > 0));
  const r = await p1.refresh(ids, 'n1', 600_000);
  assert.deepEqual(r, { restored: [], ok: true });
  const extended = (await ttls()).flat();
  assert.ok(extended.length === 40 && extended.every((t) => t > 60_000), 'extended on both shards');
  // Last seen: the holding node's latest renewal of its liveness key on the entry's shard, not the entry's own (1000).
  assert.ok([...(await p2.getMany(ids)).values()].every((e) => e.lastSeenAt > Date.now() - 10_000), 'last seen at n1\'s renewal on both shards');
  assert.equal((await p2.set(ids[1], entry('n2'), 60_000)).prev, 'n1', 'a takeover is seen on the shard');
  await p2.remove(ids[2], 'n2');
  assert.ok(await p1.get(ids[2]), 'only the holder removes');
  await p1.remove(ids[2], 'n1');
  assert.equal(await p1.get(ids[2]), undefined);
  // A clean close drops the node's liveness key on every shard: its hosts read offline everywhere at once.
  await p1.close();
  const left = await p2.getMany(ids);
  assert.deepEqual([...left.keys()], [ids[1]], 'only the host node n2 took over');
  await p2.close();
});

test('presence: a shard restarted empty gets this node\'s entries written again at the next refresh', { skip }, async () => {
  const [first, s1, s2] = [await server(), await server(), await server()];
  const b = await bus(first.url, [s1.url, s2.url], 'pr2:');
  const p = presenceIn(b, 'n1');
  const ids = Array.from({ length: 20 }, (_, i) => `hst_r${i}`);
  await Promise.all(ids.map((id) => p.set(id, entry('n1'), 60_000)));
  const onSecond = ids.filter((id) => shardOf(id, 2) === 1);
  assert.ok(onSecond.length > 0);
  await s2.kill();
  await s2.start(); // empty
  await eventually(async () => b.healthy() || undefined, 10_000, 20);
  const r = await eventually(async () => {
    const x = await p.refresh(ids, 'n1', 60_000);
    return x.ok ? x : undefined;
  }, 10_000, 50);
  assert.deepEqual(r.restored.sort(), [...onSecond].sort(), 'what the restarted shard lost, and only that');
  await eventually(async () => (await p.getMany(ids)).size === ids.length || undefined, 5000, 50); // its liveness key is back too
  await p.close();
});

test('REDIS_SHARD_URLS: URLs only, beside REDIS_URL, each once', () => {
  const env = { SECRET_KEY: 'k' };
  assert.deepEqual(loadConfig({ ...env, REDIS_URL: 'redis://a:6379', REDIS_SHARD_URLS: ' redis://b:6379, rediss://c:6380 ' }).redisShardUrls, ['redis://b:6379', 'rediss://c:6380']);
  assert.deepEqual(loadConfig({ ...env, REDIS_URL: 'redis://a:6379' }).redisShardUrls, []);
  assert.throws(() => loadConfig({ ...env, REDIS_SHARD_URLS: 'redis://b:6379' }), (e: unknown) => e instanceof ConfigError && /needs REDIS_URL/.test(e.message));
  assert.throws(() => loadConfig({ ...env, REDIS_URL: 'redis://a', REDIS_SHARD_URLS: 'b:6379' }), ConfigError);
  assert.throws(() => loadConfig({ ...env, REDIS_URL: 'redis://a', REDIS_SHARD_URLS: 'redis:/:s3cret@b:6379' }), (e: unknown) => e instanceof ConfigError && !/s3cret/.test(e.message) && /"…@b:6379"/.test(e.message));
  assert.throws(() => loadConfig({ ...env, REDIS_URL: 'redis://a', REDIS_SHARD_URLS: 'redis://b,redis://b' }), /twice/);
});

const clusterSkip = skip ?? (await clusterSkipReason());
let cluster: Cluster | undefined;
let host: FakeHost | undefined;
after(async () => {
  host?.close();
  await cluster?.close();
});

test('two hubs over shards: the host on node A reads online on B, a message sent on node B streams there; the host\'s shard restarted empty: degraded meanwhile, online again after', { skip: clusterSkip, timeout: 90_000 }, async () => {
  const shardServers = [await server(), await server()];
  const shardUrls = shardServers.map((x) => x.url);
  cluster = await startCluster([{ nodeId: 'shard-a', redisShardUrls: shardUrls }, { nodeId: 'shard-b', redisShardUrls: shardUrls }]);
  const [a, b] = cluster.hubs;
  const u = await a.user();
  const { credential } = await pairHost(a, u.key);
  host = await connectFakeHost(a, credential, { capacity: 2 });
  const h = host;
  const agent = await agentWhenReady(a.client(u.key), { name: 'sharded', scope: 'private', hostId: h.hostId, engine: 'claude-code' }, 10_000);
  // Its presence entry is on one shard, none on REDIS_URL's instance; node B reads it online.
  const hostId = h.hostId!;
  const entries = await Promise.all([process.env.REDIS_URL!, ...shardUrls].map((url) => probe(url).keys(`*presence:${hostId}`)));
  assert.deepEqual(entries.map((l) => l.length), [0, ...shardUrls.map((_, i) => (shardOf(hostId, 2) === i ? 1 : 0))]);
  assert.equal((await b.client(u.key).hosts.get(hostId)).status, 'online');
  const sid = ((await b.client(u.key).sessions.create({ agentId: agent.id })) as SessionView).id;
  const stream = await openSse(`${b.url}/api/v1/sessions/${sid}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'over shards' }),
  });
  const start: any = await h.next((f) => f.t === 'run.start');
  // The session's topic is on one shard, subscribed there by node B.
  const on = await Promise.all(shardUrls.map((url) => channels(probe(url), `*session:${sid}`)));
  assert.deepEqual(on.map((l) => l.length).sort(), [0, 1], `on exactly one shard: ${JSON.stringify(on)}`);
  for (const text of ['one ', 'two ', 'three']) h.send({ t: 'run.delta', runId: start.runId, text });
  h.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await stream.ended;
  assert.deepEqual(stream.frames.filter((f) => f.event === 'message.delta').map((f) => f.data.delta), ['one ', 'two ', 'three']);
  assert.equal(stream.frames.at(-1)!.event, 'run.completed');

  // The shard holding the host's entry goes away: both nodes read degraded (bus down), then it comes back empty.
  const holder = shardServers[shardOf(hostId, 2)];
  await holder.kill();
  for (const t of [a, b]) await eventually(async () => ((await t.api('GET', '/api/v1/health')).body?.bus === 'down') || undefined, 10_000, 50);
  assert.equal((await a.api('GET', '/api/v1/health')).status, 503);
  await holder.start();
  for (const t of [a, b]) await eventually(async () => ((await t.api('GET', '/api/v1/health')).status === 200) || undefined, 15_000, 50);
  // Node A writes the entry again once its connections are back: the host reads online on B without reconnecting.
  await eventually(async () => (await b.client(u.key).hosts.get(hostId)).status === 'online' || undefined, 15_000, 100);
  assert.equal(h.ws.readyState, h.ws.OPEN, 'the host kept its channel');
});
