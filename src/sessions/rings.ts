// The replay rings of one node: a bounded ring per session (its current turn), kept
// RING_KEEP_MS after the turn for late `Last-Event-ID` resumers, and all of them together
// within one budget (RINGS_MAX_BYTES), so how many sessions a host streams into cannot grow
// the node's memory: finished rings go first, oldest first, then a growing live ring gives
// up its older events (a resumer from before them gets live events only).
import { RING_MAX_BYTES, RINGS_MAX_BYTES } from '../limits.js';
import type { SessionEventName } from './events.js';

/** Events kept per session for resumption (the current turn only). */
export const RING_SIZE = 2000;
/** How long a finished turn's ring stays for late resumers. */
export const RING_KEEP_MS = 60_000;

/** An event as the ring keeps it: its SSE frame, already encoded. */
export interface RingEntry {
  n: number;
  event: SessionEventName;
  frame: string;
}

/** First size of a ring's byte store; it doubles as a turn streams more. */
const RING_FIRST_BYTES = 1024;
/** First number of events a ring has room for; it doubles, up to RING_SIZE, as a turn streams more. */
const RING_FIRST_EVENTS = 16;
export const EVENT_CODES: SessionEventName[] = ['accepted', 'snapshot', 'message.delta', 'tool.started', 'tool.completed', 'run.completed', 'run.error'];
export const CODE_OF = new Map(EVENT_CODES.map((e, i) => [e, i]));

/**
 * A turn's events, kept as their SSE frames' UTF-8 bytes in one growing byte
 * store (frames in order, the evicted ones at its front until the store is
 * compacted) with their numbers and names in typed arrays: the ring holds no
 * JavaScript object per event, so at thousands of deltas per second nothing it
 * keeps is copied by young-generation collections or promoted (a ring of
 * strings made collections of 15–40 ms at 50,000 deltas/s, bench/RESULTS.md).
 * Bounded by RING_SIZE events and RING_MAX_BYTES bytes. Every turn makes a
 * ring, kept RING_KEEP_MS after the turn, and most turns hold a few events: it
 * starts small and grows (arrays sized for RING_SIZE at once made a kept short
 * turn cost 40 KB of RSS instead of 4 KB, bench/ring-memory.ts).
 */
export class Ring {
  /** Events there is room for (RING_SIZE at most); the arrays below are this long. */
  private cap = RING_FIRST_EVENTS;
  private ns = new Float64Array(RING_FIRST_EVENTS);
  private codes = new Uint8Array(RING_FIRST_EVENTS);
  /** Each event's frame: its offset in `store` and its length in bytes. */
  private offs = new Int32Array(RING_FIRST_EVENTS);
  private lens = new Int32Array(RING_FIRST_EVENTS);
  private store = Buffer.allocUnsafe(0);
  /** Bytes of `store` in use: the live frames end here. */
  private end = 0;
  private start = 0;
  private size = 0;
  /** Bytes of the frames held, bounded by RING_MAX_BYTES. */
  private bytes = 0;
  /** Events evicted from the front: a resume from before them cannot be served. */
  dropped = 0;
  timer?: NodeJS.Timeout;

  constructor(readonly runId: string) {}

  push(n: number, event: SessionEventName, frame: string): void {
    const len = Buffer.byteLength(frame);
    if (this.size === this.cap) {
      if (this.cap < RING_SIZE) this.grow();
      else this.evict();
    }
    // Bounded in bytes (src/limits.ts): the newest event always stays.
    while (this.size > 0 && this.bytes + len > RING_MAX_BYTES) this.evict();
    this.room(len);
    const at = (this.start + this.size) % this.cap;
    this.ns[at] = n;
    this.codes[at] = CODE_OF.get(event)!;
    this.offs[at] = this.end;
    this.lens[at] = len;
    this.store.write(frame, this.end, len, 'utf8');
    this.end += len;
    this.size++;
    this.bytes += len;
  }

  /** Doubles the room for events (up to RING_SIZE), the held ones moved to the front in order. */
  private grow(): void {
    const cap = Math.min(this.cap * 2, RING_SIZE);
    const ns = new Float64Array(cap), codes = new Uint8Array(cap), offs = new Int32Array(cap), lens = new Int32Array(cap);
    for (let i = 0; i < this.size; i++) {
      const at = (this.start + i) % this.cap;
      ns[i] = this.ns[at];
      codes[i] = this.codes[at];
      offs[i] = this.offs[at];
      lens[i] = this.lens[at];
    }
    this.ns = ns;
    this.codes = codes;
    this.offs = offs;
    this.lens = lens;
    this.cap = cap;
    this.start = 0;
  }

  /** Makes room for `len` more bytes at the end: moves the live frames to the front, or grows the store. */
  private room(len: number): void {
    if (this.end + len <= this.store.length) return;
    const live = this.size ? this.offs[this.start] : this.end;
    const need = this.bytes + len;
    // Growing when the live frames would fill most of the store keeps the moves amortised; the store stays
    // under twice RING_MAX_BYTES (one frame over the bound is held alone, in a store its size).
    const target = need * 2 > this.store.length ? Math.max(need, Math.min(Math.max(RING_FIRST_BYTES, this.store.length * 2), 2 * RING_MAX_BYTES)) : this.store.length;
    const next = target === this.store.length ? this.store : Buffer.allocUnsafe(target);
    this.store.copy(next, 0, live, this.end);
    this.store = next;
    this.end -= live;
    for (let i = 0; i < this.size; i++) this.offs[(this.start + i) % this.cap] -= live;
  }

  private evict(): void {
    this.bytes -= this.lens[this.start];
    this.start = (this.start + 1) % this.cap;
    this.size--;
    this.dropped++;
    if (this.size === 0) this.end = 0;
  }

  /** Bytes held (tests). */
  get held(): number {
    return this.bytes;
  }

  /** Memory it takes: its byte store and its index arrays (8 + 1 + 4 + 4 bytes an event). */
  get footprint(): number {
    return this.store.length + this.cap * 17;
  }

  /** Keeps the newest event alone, in a store its size: what a live ring gives up when the node's rings are over their budget. */
  shrink(): void {
    while (this.size > 1) this.evict();
    const len = this.size ? this.lens[this.start] : 0;
    const next = Buffer.allocUnsafe(len);
    if (len) this.store.copy(next, 0, this.offs[this.start], this.offs[this.start] + len);
    this.store = next;
    this.end = len;
    if (this.size) this.offs[this.start] = 0;
  }

  /** Entries with n above `after`, oldest first. */
  after(after: number): RingEntry[] {
    const out: RingEntry[] = [];
    for (let i = 0; i < this.size; i++) {
      const at = (this.start + i) % this.cap;
      if (this.ns[at] > after) out.push({ n: this.ns[at], event: EVENT_CODES[this.codes[at]], frame: this.store.toString('utf8', this.offs[at], this.offs[at] + this.lens[at]) });
    }
    return out;
  }
}

/** A node's rings, one per session, within `maxBytes` together (their footprints). */
export class Rings {
  private readonly bySession = new Map<string, Ring>();
  /** Rings of finished turns, in the order they finished: the first to go. */
  private readonly finished = new Map<string, Ring>();
  private total = 0;

  constructor(
    readonly maxBytes = RINGS_MAX_BYTES,
    /** Told of each ring let go (replaced, expired or dropped for room): its run's numbering goes with it. */
    private readonly onDrop: (runId: string) => void,
  ) {}

  /** Bytes all rings take. */
  get bytes(): number {
    return this.total;
  }

  get(sessionId: string): Ring | undefined {
    return this.bySession.get(sessionId);
  }

  /** The session's ring for `runId`: a new one when it holds another turn (which is let go). */
  of(sessionId: string, runId: string): Ring {
    const ring = this.bySession.get(sessionId);
    if (ring && ring.runId === runId) return ring;
    if (ring) this.drop(sessionId, ring);
    const fresh = new Ring(runId);
    this.bySession.set(sessionId, fresh);
    this.total += fresh.footprint;
    return fresh;
  }

  push(ring: Ring, n: number, event: SessionEventName, frame: string): void {
    const before = ring.footprint;
    ring.push(n, event, frame);
    this.total += ring.footprint - before;
    if (this.total > this.maxBytes) this.shed(ring);
  }

  /** The turn in `ring` ended: kept RING_KEEP_MS for late resumers, unless room is needed first. */
  finish(sessionId: string, ring: Ring): void {
    if (this.bySession.get(sessionId) !== ring) return;
    if (ring.timer) clearTimeout(ring.timer);
    ring.timer = setTimeout(() => {
      if (this.bySession.get(sessionId) === ring) this.drop(sessionId, ring);
    }, RING_KEEP_MS);
    ring.timer.unref?.();
    this.finished.delete(sessionId);
    this.finished.set(sessionId, ring);
  }

  /** Over the budget: finished rings go, oldest first (not the one being written); then `current` keeps only its newest event. */
  private shed(current: Ring): void {
    for (const [sessionId, ring] of this.finished) {
      if (this.total <= this.maxBytes) return;
      if (ring !== current) this.drop(sessionId, ring);
    }
    if (this.total <= this.maxBytes) return;
    const before = current.footprint;
    current.shrink();
    this.total += current.footprint - before;
  }

  private drop(sessionId: string, ring: Ring): void {
    if (ring.timer) clearTimeout(ring.timer);
    this.bySession.delete(sessionId);
    if (this.finished.get(sessionId) === ring) this.finished.delete(sessionId);
    this.total -= ring.footprint;
    this.onDrop(ring.runId);
  }

  close(): void {
    for (const r of this.bySession.values()) if (r.timer) clearTimeout(r.timer);
    this.bySession.clear();
    this.finished.clear();
    this.total = 0;
  }
}
