// What a finished turn's replay ring (src/sessions/events.ts) costs while it
// is kept for late resumers (RING_KEEP_MS): every session whose turn ended in
// the last minute holds one, so at thousands of turns a minute this is memory
// per active session, not per turn. A short turn (accepted, 5 deltas, its end)
// on N sessions, memory read after a full GC before and after.
//
//   node --expose-gc --import tsx bench/ring-memory.ts   (RING_TURNS=20000)
import { LocalBus } from '../src/bus/local.js';
import { SessionEvents } from '../src/sessions/events.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const N = Number(process.env.RING_TURNS ?? 20_000);
const events = new SessionEvents(new LocalBus());
gc();
const m0 = process.memoryUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const s = `ses_${i}`, r = `run_${i}`;
  events.emit(s, r, 'accepted', { messageId: 'msg_x' });
  for (let k = 0; k < 5; k++) events.emit(s, r, 'message.delta', { delta: `hello world ${k}` });
  events.emit(s, r, 'run.completed', { status: 'completed', messageId: 'msg_y' });
}
const ms = performance.now() - t0;
gc();
const m1 = process.memoryUsage();
const kb = (k: keyof NodeJS.MemoryUsage) => ((m1[k] - m0[k]) / N / 1024).toFixed(2);
console.log(`${N} finished turns of 7 events, each session's ring kept: per turn RSS ${kb('rss')} KB, ArrayBuffers ${kb('arrayBuffers')} KB, JS heap ${kb('heapUsed')} KB; ${((ms * 1000) / N).toFixed(1)} µs to emit a turn's events`);
events.close();
