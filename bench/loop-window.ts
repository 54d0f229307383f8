// A server process's event-loop delay over a window the bench opens and
// closes (IPC: {t: 'loop-reset'} opens it, {t: 'loop-read'} closes it and is
// answered {t: 'loop', loop: {p99, max}} in ms). The monitor runs only inside
// a window: its 1 ms timer costs a process about 25 ms of CPU a second on the
// reference machine (1,000 wake-ups), so the hub and the baselines it is set
// beside each pay it in the same windows, and nowhere else.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Answers the window messages on this process's IPC channel; true when `m` was one. */
export function loopWindow(): (m: { t: string }) => boolean {
  const h = monitorEventLoopDelay({ resolution: 1 });
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  return (m) => {
    if (m.t === 'loop-reset') {
      h.reset();
      h.enable();
      return true;
    }
    if (m.t !== 'loop-read') return false;
    h.disable();
    process.send!({ t: 'loop', loop: { p99: ms(h.percentile(99)), max: ms(h.max) } });
    return true;
  };
}
