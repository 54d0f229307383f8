// What the bus's keyed topics cost each Redis instance when spread over shards
// (REDIS_SHARD_URLS, src/bus/redis.ts), beside one instance carrying them all:
// the capacity model's first ceiling is one Redis's single core, and every
// streamed delta is one PUBLISH to a `session:<id>` topic.
//
// Private redis-servers (one, plus SHARDS_MAX shards); two RedisBus nodes in
// this process, node B subscribed to SHARDS_TOPICS session topics, node A
// publishing SHARDS_N messages of SHARDS_BYTES bytes to them in turns of
// SHARDS_BATCH (deltas under load), round robin over the topics. Each round
// alternates the layouts: no shards (the first instance carries every topic)
// and SHARDS_MAX shards. Per layout: Redis CPU per message on each instance
// (INFO used_cpu_sys + used_cpu_user) and on the busiest one, this process's
// CPU per message (both nodes' publishing and receiving), messages per second.
// Then presence, the other load spread over the shards: SHARDS_HOSTS entries
// written, then refreshed SHARDS_REFRESHES times in full (a channel sweep's
// call, chunks of 500 hosts per script); Redis CPU per host refreshed on each
// instance, and this process's.
//
//   npx tsx bench/redis-shards.ts   (SHARDS_MAX=2, SHARDS_N=200000, SHARDS_TOPICS=1000, SHARDS_BATCH=20, SHARDS_BYTES=180, SHARDS_ROUNDS=3,
//                                    SHARDS_HOSTS=20000, SHARDS_REFRESHES=10; prints only)
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { RedisBus } from '../src/bus/redis.js';
import { presenceIn } from '../src/hosts/presence-sharded.js';
import { privateRedis, hasRedisServer } from './private-redis.js';
import { redisStats } from './redis-stats.js';
import { runIfMain } from './main.js';

const MAX = Number(process.env.SHARDS_MAX ?? 2);
const N = Number(process.env.SHARDS_N ?? 200_000);
const TOPICS = Number(process.env.SHARDS_TOPICS ?? 1000);
const BATCH = Number(process.env.SHARDS_BATCH ?? 20);
const BYTES = Number(process.env.SHARDS_BYTES ?? 180);
const ROUNDS = Number(process.env.SHARDS_ROUNDS ?? 3);
const HOSTS = Number(process.env.SHARDS_HOSTS ?? 20_000);
const REFRESHES = Number(process.env.SHARDS_REFRESHES ?? 10);

interface Round {
  /** Redis CPU µs per message, per instance (the first, then the shards). */
  perInstance: number[];
  processUs: number;
  perSecond: number;
}

const nextTurn = () => new Promise((r) => setImmediate(r));

async function round(urls: string[], shards: number): Promise<Round> {
  const prefix = `bs${randomBytes(3).toString('hex')}:`;
  const shardUrls = urls.slice(1, 1 + shards);
  const used = [urls[0], ...shardUrls];
  const a = await RedisBus.connect(urls[0], { prefix, shardUrls });
  const b = await RedisBus.connect(urls[0], { prefix, shardUrls });
  const topics = Array.from({ length: TOPICS }, (_, i) => `session:${prefix}${i}`);
  let got = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  for (const t of topics) b.subscribe(t, () => ++got === N && done());
  await b.ready();
  const probes = used.map((u) => new Redis(u));
  const before = await Promise.all(probes.map(redisStats));
  const payload = randomBytes(BYTES);
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let sent = 0; sent < N; ) {
    for (let i = 0; i < BATCH && sent < N; i++, sent++) a.publish(topics[sent % TOPICS], payload);
    await nextTurn();
    // Open loop within reason: do not run ahead of delivery by more than a second's worth of Redis buffers.
    while (sent - got > 50_000) await new Promise((r) => setTimeout(r, 1));
  }
  await all;
  const wall = (performance.now() - w0) / 1000;
  const cpu = process.cpuUsage(t0);
  const after = await Promise.all(probes.map(redisStats));
  for (const p of probes) p.disconnect();
  await Promise.all([a.close(), b.close()]);
  return {
    perInstance: after.map((s, i) => ((s.cpuMs - before[i].cpuMs) * 1000) / N),
    processUs: (cpu.user + cpu.system) / N,
    perSecond: N / wall,
  };
}

/** Presence refreshes: Redis CPU per host refreshed on each instance (the first, then the shards), and this process's. */
async function presenceRound(urls: string[], shards: number): Promise<Round> {
  const prefix = `bp${randomBytes(3).toString('hex')}:`;
  const shardUrls = urls.slice(1, 1 + shards);
  const bus = await RedisBus.connect(urls[0], { prefix, shardUrls });
  const p = presenceIn(bus, 'bench-node');
  const ids = Array.from({ length: HOSTS }, (_, i) => `hst_${prefix}${i}`);
  const engines = [{ id: 'claude-code', displayName: 'Claude Code' }];
  for (let i = 0; i < ids.length; i += 500) await Promise.all(ids.slice(i, i + 500).map((id) => p.set(id, { nodeId: 'bench-node', running: 0, capacity: 2, engines, lastSeenAt: Date.now() }, 600_000)));
  const probes = [urls[0], ...shardUrls].map((u) => new Redis(u));
  const before = await Promise.all(probes.map(redisStats));
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let r = 0; r < REFRESHES; r++) {
    const done = await p.refresh(ids, 'bench-node', 600_000);
    if (!done.ok || done.restored.length) throw new Error('a presence refresh failed');
  }
  const wall = (performance.now() - w0) / 1000;
  const cpu = process.cpuUsage(t0);
  const after = await Promise.all(probes.map(redisStats));
  for (const x of probes) x.disconnect();
  await p.close();
  await bus.close();
  const n = HOSTS * REFRESHES;
  return { perInstance: after.map((st, i) => ((st.cpuMs - before[i].cpuMs) * 1000) / n), processUs: (cpu.user + cpu.system) / n, perSecond: n / wall };
}

export async function run(): Promise<Record<string, Round[]>> {
  if (!hasRedisServer()) throw new Error('no redis-server binary: the shards must be Redis servers of the run\'s own');
  const servers = await Promise.all(Array.from({ length: 1 + MAX }, () => privateRedis()));
  const urls = servers.map((s) => s.url);
  const out: Record<string, Round[]> = { 'no shards': [], [`${MAX} shards`]: [], 'presence, no shards': [], [`presence, ${MAX} shards`]: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      out['no shards'].push(await round(urls, 0));
      out[`${MAX} shards`].push(await round(urls, MAX));
    }
    for (let r = 0; r < ROUNDS; r++) {
      out['presence, no shards'].push(await presenceRound(urls, 0));
      out[`presence, ${MAX} shards`].push(await presenceRound(urls, MAX));
    }
  } finally {
    for (const s of servers) s.proc?.kill();
  }
  return out;
}

runIfMain(import.meta.url, async () => {
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const out = await run();
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const f = (x: number) => x.toFixed(2);
  console.log(`${cpus().length} × ${cpus()[0]?.model.trim()}; load ${load} at the start, ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end`);
  console.log(`${N} messages of ${BYTES} bytes to ${TOPICS} session topics per round, in turns of ${BATCH}; ${ROUNDS} rounds, layouts alternating; medians, then each round:`);
  for (const [name, rs] of Object.entries(out)) {
    if (name === 'presence, no shards') console.log(`${HOSTS} hosts' presence refreshed ${REFRESHES} times in full per round (chunks of 500 hosts per script), ${ROUNDS} rounds alternating; per host refreshed:`);
    const unit = name.startsWith('presence') ? 'refresh' : 'message';
    const instances = rs[0].perInstance.length;
    const per = Array.from({ length: instances }, (_, i) => median(rs.map((r) => r.perInstance[i])));
    const busiest = median(rs.map((r) => Math.max(...r.perInstance)));
    const total = median(rs.map((r) => r.perInstance.reduce((s, x) => s + x, 0)));
    console.log(`  ${name}: Redis CPU per ${unit} ${per.map((x, i) => `${i === 0 ? 'first' : `shard ${i}`} ${f(x)} µs`).join(', ')}; busiest instance ${f(busiest)} µs (${rs.map((r) => f(Math.max(...r.perInstance))).join(', ')}); all instances ${f(total)} µs`);
    console.log(`    this process ${f(median(rs.map((r) => r.processUs)))} µs per ${unit} (${rs.map((r) => f(r.processUs)).join(', ')}); ${Math.round(median(rs.map((r) => r.perSecond)))} ${unit === 'refresh' ? 'refreshes' : 'messages'}/s (${rs.map((r) => Math.round(r.perSecond)).join(', ')})`);
  }
});
