// What a host's presence write (the hello's `set`) costs the hub's process and
// Redis, in a connect storm's shape: turns of B hellos each (their writes
// queued in one turn, sent at its end), W hosts in all. CPU is this process's
// utime+stime and Redis's used_cpu_sys+used_cpu_user, per write; the median of
// R windows. Needs REDIS_URL.
//
//   REDIS_URL=… npx tsx bench/presence-writes.ts     (PRESENCE_W=20000, PRESENCE_B=1,20, PRESENCE_R=5; prints its table)
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisPresence } from '../src/hosts/presence-redis.js';

const W = Number(process.env.PRESENCE_W ?? 20_000);
const BATCHES = (process.env.PRESENCE_B ?? '1,20').split(',').map(Number);
const R = Number(process.env.PRESENCE_R ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function redisCpuMs(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const f = (k: string) => Number(info.match(new RegExp(`^${k}:([\\d.]+)`, 'm'))?.[1] ?? 0);
  return (f('used_cpu_sys') + f('used_cpu_user')) * 1000;
}

const url = process.env.REDIS_URL;
if (!url) {
  console.log('REDIS_URL is not set');
  process.exit(0);
}
const redis = new Redis(url);
const prefix = `bench_presence_${randomBytes(4).toString('hex')}:`;
const p = new RedisPresence(redis, (k) => prefix + k, 'bench-node');
const engines = [{ id: 'claude-code', displayName: 'Claude Code', version: '2.0.1' }];
console.log('| hellos per turn | hub µs per write | Redis µs per write |\n|---:|---:|---:|');
for (const b of BATCHES) {
  const hub: number[] = [];
  const red: number[] = [];
  for (let w = 0; w < R; w++) {
    const r0 = await redisCpuMs(redis);
    const c0 = process.cpuUsage();
    for (let i = 0; i < W; i += b) {
      const turn: Array<Promise<unknown>> = [];
      for (let k = 0; k < b; k++) turn.push(p.set(`hst_${w}_${i + k}`, { nodeId: 'bench-node', running: 0, capacity: 5, engines, lastSeenAt: Date.now() }, 15_000));
      await Promise.all(turn);
    }
    const c = process.cpuUsage(c0);
    hub.push((c.user + c.system) / W);
    red.push(((await redisCpuMs(redis)) - r0) * 1000 / W);
  }
  console.log(`| ${b} | ${median(hub).toFixed(1)} | ${median(red).toFixed(1)} |`);
}
const keys = await redis.keys(`${prefix}*`);
for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
await p.close();
redis.disconnect();
