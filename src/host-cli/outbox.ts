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

/**
 * A waiting frame and its size, counted once. An open delta keeps its text as pieces, joined when it
 * leaves: appending to one string and measuring it again on every delta copied the whole text each
 * time (tens of seconds of CPU for a megabyte of small deltas).
 */
interface Entry {
  f: HostToHub;
  size: number;
  pieces?: string[];
}

export class Outbox {
  private entries: Entry[] = [];
  private bytes = 0;
  /** Per run: its delta still waiting with no later frame of that run behind it (text may be appended). */
  private readonly openDelta = new Map<string, Entry>();

  get length(): number {
    return this.entries.length;
  }

  push(f: HostToHub): void {
    if (f.t === 'run.delta') {
      const n = Buffer.byteLength(f.text);
      const prev = this.openDelta.get(f.runId);
      if (prev && prev.size - FRAME_OVERHEAD + n <= PAYLOAD_MAX_BYTES) {
        prev.pieces!.push(f.text);
        prev.size += n;
        this.bytes += n;
        return this.makeRoom();
      }
      const e: Entry = { f: { ...f }, size: FRAME_OVERHEAD + n, pieces: [f.text] };
      this.openDelta.set(f.runId, e);
      return this.add(e);
    }
    if ('runId' in f) this.openDelta.delete(f.runId);
    this.add({ f, size: sizeOf(f) });
  }

  /** Removes and returns up to `n` frames from the front. */
  take(n: number): HostToHub[] {
    return this.entries.splice(0, n).map((e) => this.leave(e));
  }

  private add(e: Entry): void {
    this.entries.push(e);
    this.bytes += e.size;
    this.makeRoom();
  }

  /** An entry leaving the queue (sent or dropped): its frame, a delta's pieces joined. */
  private leave(e: Entry): HostToHub {
    this.bytes -= e.size;
    if (e.pieces) {
      (e.f as Delta).text = e.pieces.length === 1 ? e.pieces[0] : e.pieces.join('');
      if (this.openDelta.get((e.f as Delta).runId) === e) this.openDelta.delete((e.f as Delta).runId);
    }
    return e.f;
  }

  private makeRoom(): void {
    for (const kind of ['run.delta', 'run.message'] as const) {
      while (this.bytes > OUTBOX_MAX_BYTES || this.entries.length > OUTBOX_MAX_FRAMES) {
        const i = this.entries.findIndex((e) => e.f.t === kind);
        if (i < 0) break;
        this.leave(this.entries.splice(i, 1)[0]);
      }
    }
  }
}
