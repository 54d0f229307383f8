// Redis's own counters, read before and after a window: CPU (used_cpu_sys +
// used_cpu_user), commands processed and calls per command (INFO stats and
// commandstats; both count a script's inner commands as well as the script
// call itself).
import type { Redis } from 'ioredis';

export interface RedisStats {
  cpuMs: number;
  commands: number;
  calls: Map<string, number>;
}

export async function redisStats(r: Redis): Promise<RedisStats> {
  const info = (await r.info('cpu')) + (await r.info('stats'));
  const field = (k: string) => Number(info.match(new RegExp(`^${k}:([0-9.]+)`, 'm'))?.[1] ?? NaN);
  const calls = new Map<string, number>();
  for (const m of (await r.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1], Number(m[2]));
  return { cpuMs: (field('used_cpu_sys') + field('used_cpu_user')) * 1000, commands: field('total_commands_processed'), calls };
}

/** The commands called most between two readings, per unit: "publish 2.04, evalsha 0.6". */
export function topCalls(a: RedisStats, b: RedisStats, units: number, n = 5): string {
  return [...b.calls]
    .map(([k, v]) => [k, (v - (a.calls.get(k) ?? 0)) / units] as const)
    .filter(([, v]) => v > 0)
    .sort((x, y) => y[1] - x[1])
    .slice(0, n)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}
