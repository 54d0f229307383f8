// CPU time from Linux /proc: of one process (its stat file), for per-unit
// costs that contention does not distort the way it does latency, and of the
// whole machine (/proc/stat), for the share the hypervisor stole. The one
// reader of these counters for every bench module.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's counters (CLK_TCK: 100 on Linux). */
const TICK = 100;

/** A stat file's command name and utime + stime (fields 14 and 15), ms; undefined when it is gone. */
function readStat(path: string): { name: string; cpuMs: number } | undefined {
  try {
    const s = readFileSync(path, 'utf8');
    // The name is in parentheses and may itself hold ") ": the fields start after the last one.
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');
    return { name: s.slice(s.indexOf('(') + 1, close), cpuMs: ((Number(f[11]) + Number(f[12])) / TICK) * 1000 };
  } catch {
    return undefined;
  }
}

/** A process's command name and CPU ms (user+sys, all threads), or undefined when it is gone. */
export function processStat(pid: number | string): { name: string; cpuMs: number } | undefined {
  return readStat(`/proc/${pid}/stat`);
}

/** CPU ms (user+sys, all threads) of a process, or undefined when it is gone or unknown. */
export function processCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : readStat(`/proc/${pid}/stat`)?.cpuMs;
}

/** CPU ms (user+sys) of a process's main thread alone (its task whose id is the pid), or undefined. */
export function mainThreadCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : readStat(`/proc/${pid}/task/${pid}/stat`)?.cpuMs;
}

/** The machine's CPU time counters (the first line of /proc/stat): total and the part the hypervisor gave to other guests. */
export function machineCpuTimes(): { total: number; steal: number } | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest times are inside user/nice)
    return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
  } catch {
    return undefined;
  }
}
