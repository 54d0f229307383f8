// A target missed is reported with the profile that explains it (issue 15): when a module's
// verdict is "NOT met", it runs the missed phase once more with the hub's CPU profiled and
// appends the profile in text under its table — the functions with the most self and inclusive
// time over the busy samples, and the longest stretches without an idle sample (what held the
// event loop) — beside the main thread's CPU time over the round from /proc. The two differ both
// ways: V8's sampler counts wall time (a thread descheduled inside a system call reads busy), and
// it counts native code the event loop calls (uWS's own HTTP and WebSocket work) as idle. The
// extra round is not one of the measured rounds, so the figures above it are unprofiled.
// BENCH_PROFILE_MISSES=0 leaves it out; BENCH_PROFILE_MISSES=all profiles every target, missed or
// not (a met target's profile beside a missed one's).
import { Session } from 'node:inspector/promises';
import { profileText, type Profile } from './profile-summary.js';
import { mainThreadCpuMs } from './proc-cpu.js';
import { recording } from './main.js';

/**
 * Starting V8's profiler holds the thread while it records every compiled function's positions
 * (16 ms in a bare process, about 100 ms in a hub under load): the round starts this long after.
 */
const SETTLE_MS = 250;

/** Whether a target with this verdict gets a profiled round. */
export function profileWanted(missed: boolean): boolean {
  const mode = process.env.BENCH_PROFILE_MISSES ?? '1';
  return mode === 'all' || (missed && mode !== '0');
}

/** Something whose main thread can be CPU-profiled between two calls: a child hub, or this process. */
export interface Profiler {
  start(): Promise<void>;
  stop(): Promise<Profile>;
  /** The profiled process, for its main thread's CPU time (Linux /proc). */
  pid?: number;
}

/** This process's main thread (a hub started in it; load workers are other isolates and not sampled). */
export function inProcessProfiler(): Profiler {
  let session: Session | undefined;
  return {
    pid: process.pid,
    async start() {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    async stop() {
      if (!session) throw new Error('the profiler was not started');
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      return profile as unknown as Profile;
    },
  };
}

/**
 * Runs `round` with each of `who`'s profilers on and answers the text to append: a line saying
 * what was profiled (`what`), then each profile's summary in a text block.
 */
export async function profiledRound(what: string, who: Array<{ name: string; profiler: Profiler }>, round: () => Promise<string | void>): Promise<string> {
  await Promise.all(who.map((w) => w.profiler.start()));
  let said: string | void;
  const profiles: Profile[] = [];
  let cpu0: Array<number | undefined> = [];
  let cpu1: Array<number | undefined> = [];
  let wall = 0;
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    cpu0 = who.map((w) => mainThreadCpuMs(w.profiler.pid));
    const t0 = performance.now();
    said = await round();
    wall = performance.now() - t0;
    cpu1 = who.map((w) => mainThreadCpuMs(w.profiler.pid));
  } finally {
    for (const w of who) profiles.push(withoutStart(await w.profiler.stop()));
  }
  const cpuLine = (i: number) => {
    const [a, b] = [cpu0[i], cpu1[i]];
    if (a === undefined || b === undefined) return '';
    return ` Main thread CPU over the round's ${(wall / 1000).toFixed(1)} s: ${Math.round(b - a)} ms (/proc); V8's samples outside idle over the profile's whole window: ${Math.round(busyMs(profiles[i]))} ms (wall time: a thread descheduled in a system call reads busy; uWS's native work reads idle).`;
  };
  const text = [
    '',
    `**${what}**${said ? ` ${said}` : ''}`,
    ...who.flatMap((w, i) => ['', `${w.name}.${cpuLine(i)}`, '', '```text', profileText(profiles[i]), '```']),
    '',
  ].join('\n');
  // BENCH_RECORD=0 (a trial): nothing goes to bench/RESULTS.md, so the profile is printed where it is read.
  if (!recording()) console.log(text);
  return text;
}

/** Sampled time outside idle (ms). */
function busyMs(p: Profile): number {
  const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  let us = 0;
  p.samples.forEach((id, i) => void (idle.has(id) || (us += p.timeDeltas[i] ?? 0)));
  return us / 1000;
}

/** The profile without its first sample, which carries the profiler's own start (the inspector's `dispatch`). */
export function withoutStart(p: Profile): Profile {
  if (!p.samples.length) return p;
  return { ...p, samples: p.samples.slice(1), timeDeltas: p.timeDeltas.slice(1), startTime: (p.startTime ?? 0) + (p.timeDeltas[0] ?? 0) };
}
