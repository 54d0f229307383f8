// Frames waiting for the channel (it is down, or the queue is still being flushed). Bounded in
// frames and bytes; a run's deltas are merged while they wait (fewer frames for the hub's rate
// limit); to make room, deltas go first (the run's message carries their text), then the oldest
// messages; a run's start and end, and replies, are never dropped: without its end a run stays
// running on the hub, without a reply a request times out.
import type { FrameOf, HostToHub } from '../../host-protocol/frames.js';
import { PAYLOAD_MAX_BYTES } from './bounds.js';

/** Most bytes of run output waiting (UTF-8, estimated); past it the oldest output is dropped. */
export const OUTBOX_MAX_BYTES = 16 * 1024 * 1024;
/** Most frames waiting. */
export const OUTBOX_MAX_FRAMES = 10_000;
/** What a frame is counted for besides its text. */
const FRAME_OVERHEAD = 64;

type Delta = FrameOf<HostToHub, 'run.delta'>;

/** Estimated bytes of a frame (its strings as UTF-8 at most 3 bytes a unit would over-count; this is a bound, not a size). */
function sizeOf(f: HostToHub): number {
  if (f.t === 'run.delta') return FRAME_OVERHEAD + Buffer.byteLength(f.text);
  if (f.t === 'run.message') return FRAME_OVERHEAD + Buffer.byteLength(JSON.stringify(f.blocks));
  return FRAME_OVERHEAD;
}

export class Outbox {
  private frames: HostToHub[] = [];
  private bytes = 0;
  /** Per run: its delta still waiting with no later frame of that run behind it (text may be appended). */
  private readonly openDelta = new Map<string, Delta>();

  get length(): number {
    return this.frames.length;
  }

  push(f: HostToHub): void {
    if (f.t === 'run.delta') {
      const prev = this.openDelta.get(f.runId);
      if (prev && Buffer.byteLength(prev.text) + Buffer.byteLength(f.text) <= PAYLOAD_MAX_BYTES) {
        prev.text += f.text;
        this.bytes += Buffer.byteLength(f.text);
        return this.makeRoom();
      }
      f = { ...f }; // ours to append to
      this.openDelta.set(f.runId, f);
    } else if ('runId' in f) this.openDelta.delete(f.runId);
    this.frames.push(f);
    this.bytes += sizeOf(f);
    this.makeRoom();
  }

  /** Removes and returns up to `n` frames from the front. */
  take(n: number): HostToHub[] {
    const out = this.frames.splice(0, n);
    for (const f of out) {
      this.bytes -= sizeOf(f);
      if (f.t === 'run.delta' && this.openDelta.get(f.runId) === f) this.openDelta.delete(f.runId);
    }
    return out;
  }

  private makeRoom(): void {
    for (const kind of ['run.delta', 'run.message'] as const) {
      while (this.bytes > OUTBOX_MAX_BYTES || this.frames.length > OUTBOX_MAX_FRAMES) {
        const i = this.frames.findIndex((f) => f.t === kind);
        if (i < 0) break;
        const [f] = this.frames.splice(i, 1);
        this.bytes -= sizeOf(f);
        if (f.t === 'run.delta' && this.openDelta.get(f.runId) === f) this.openDelta.delete(f.runId);
      }
    }
  }
}
