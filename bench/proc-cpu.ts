// CPU time of one process of this machine (Linux /proc/<pid>/stat), for
// per-unit costs that contention does not distort the way it does latency.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's counters (CLK_TCK: 100 on Linux). */
const TICK = 100;

/** utime + stime (fields 14 and 15) of a /proc stat file, ms; undefined when it is gone. */
function statCpuMs(path: string): number | undefined {
  try {
    const rest = readFileSync(path, 'utf8').split(') ')[1].split(' ');
    return ((Number(rest[11]) + Number(rest[12])) / TICK) * 1000;
  } catch {
    return undefined;
  }
}

/** CPU ms (user+sys, all threads) of a process, or undefined when it is gone or unknown. */
export function processCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statCpuMs(`/proc/${pid}/stat`);
}

/** CPU ms (user+sys) of a process's main thread alone (its task whose id is the pid), or undefined. */
export function mainThreadCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}
