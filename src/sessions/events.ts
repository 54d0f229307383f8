// Session events: published on the Bus topic `session:<id>` (after the state
// they describe is committed), kept in a bounded ring per session on the node
// that produces them so `Last-Event-ID` can resume the current turn, and piped
// into SSE streams. Event ids are `<runId>:<n>`, increasing within a run.
import type { Bus } from '../bus/bus.js';
import { decodeObj } from '../bus/bus.js';
import { decodeWire, encodeWire, WIRE_TAG } from './event-wire.js';
import { formatEvent, type EventStream } from '../server/sse.js';
import { CODE_OF, EVENT_CODES, Rings, type RingEntry } from './rings.js';
import { RINGS_MAX_BYTES } from '../limits.js';

export { RING_KEEP_MS, RING_SIZE, type RingEntry } from './rings.js';

export type SessionEventName = 'accepted' | 'snapshot' | 'message.delta' | 'tool.started' | 'tool.completed' | 'run.completed' | 'run.error';

export interface SessionEvent {
  /** `<runId>:<n>` */
  id: string;
  runId: string;
  event: SessionEventName;
  data: { sessionId: string; status: string; [k: string]: unknown };
  /** message.delta only: when its host frame arrived (epoch ms), for the delta latency metric; not part of the SSE frame. */
  at?: number;
}

/** The number of a run's end event: it sorts after every other, whichever node numbers it. */
export const FINAL_N = 2 ** 50;
const isEnd = (event: SessionEventName) => event === 'run.completed' || event === 'run.error';

export class SessionEvents {
  private counters = new Map<string, number>();
  private readonly rings: Rings;

  /** In-process readers per session, used instead of the Bus when it is the single-process one (no MessagePack round trip per delta). */
  private readonly local = new Map<string, Set<(e: SessionEvent) => void>>();

  /** Live subscriptions made here (one per open feed): a leak shows up as a count that does not come back. */
  private live = 0;

  constructor(
    private readonly bus: Bus,
    /** Observes host frame → SSE write, seconds (metrics). */
    readonly deltaLatency?: { observe(seconds: number): void },
    opts: { ringsMaxBytes?: number } = {},
  ) {
    this.rings = new Rings(opts.ringsMaxBytes ?? RINGS_MAX_BYTES, (runId) => this.counters.delete(runId));
  }

  /** The budget of this node's replay rings together, and what they take now (metrics, tests). */
  get ringsMaxBytes(): number {
    return this.rings.maxBytes;
  }

  get ringsBytes(): number {
    return this.rings.bytes;
  }

  get subscriptions(): number {
    return this.live;
  }

  /** Subscribes to a session's events (from any node). The returned function is safe to call twice. */
  subscribe(sessionId: string, handler: (e: SessionEvent) => void): () => void {
    this.live++;
    let done = false;
    const counted = (unsub: () => void) => () => {
      if (done) return;
      done = true;
      this.live--;
      unsub();
    };
    if (this.bus.kind !== 'local') return counted(this.bus.subscribe(`session:${sessionId}`, (p) => {
      const e = p[0] === WIRE_TAG ? wireEvent(p) : decodeObj<SessionEvent>(p); // a MessagePack map: a node from before the wire format
      if (e) handler(e);
    }));
    let set = this.local.get(sessionId);
    if (!set) this.local.set(sessionId, (set = new Set()));
    set.add(handler);
    return counted(() => {
      set!.delete(handler);
      if (!set!.size && this.local.get(sessionId) === set) this.local.delete(sessionId);
    });
  }

  /** Publishes one event of a run; the producer node also keeps it in the ring. */
  emit(sessionId: string, runId: string, event: SessionEventName, data: Record<string, unknown>, opts: { last?: boolean; at?: number } = {}): void {
    // An end published by a node that did not produce the run (abort) must still sort after every event of it.
    // Several nodes may number one run: the dispatching node emits `accepted` (1), the node holding the
    // host's channel the rest, so a node that did not emit `accepted` starts after it, and a run's end
    // always sorts last (readers drop ids at or below the last they saw).
    const n = opts.last || isEnd(event) ? FINAL_N : (this.counters.get(runId) ?? (event === 'accepted' ? 0 : 1)) + 1;
    this.counters.set(runId, n);
    const id = `${runId}:${n}`;
    const full = { sessionId, status: 'processing', ...data };
    const ring = this.rings.of(sessionId, runId);
    const frame = eventFrame(event, full, id);
    this.rings.push(ring, n, event, frame);
    if (isEnd(event)) this.rings.finish(sessionId, ring);
    // Other nodes' readers get the frame this node made for its ring (event-wire.ts).
    if (this.bus.kind !== 'local') return this.bus.publish(`session:${sessionId}`, encodeWire(CODE_OF.get(event)!, n, opts.at, runId, frame));
    // Made whole in one literal (no properties added later): local readers share the ring's encoding and number.
    const ev: Framed = { id, runId, event, data: full, at: opts.at, [FRAME]: frame, [NUM]: n };
    const set = this.local.get(sessionId);
    // One reader (the usual case) is called straight from the set: a reader leaving during the call is safe.
    if (set) for (const h of set.size === 1 ? set : [...set]) {
      try {
        h(ev);
      } catch {
        // A failing reader must not stop delivery to the others.
      }
    }
  }

  /**
   * Events of run `runId` kept here, after event number `after` (undefined: from the start):
   * undefined when this node's ring does not hold that run, null when the window no longer
   * reaches back that far.
   */
  replay(sessionId: string, runId: string, after?: number): RingEntry[] | null | undefined {
    const ring = this.rings.get(sessionId);
    if (!ring || ring.runId !== runId) return undefined;
    if (after === undefined) return ring.dropped ? null : ring.after(0);
    if (!Number.isInteger(after) || after < ring.dropped) return null;
    return ring.after(after);
  }

  /** Bytes a session's ring holds (tests of its bound). */
  ringBytes(sessionId: string): number {
    return this.rings.get(sessionId)?.held ?? 0;
  }

  /** Subscribes now and buffers until a stream is attached (nothing published meanwhile is missed). */
  feed(sessionId: string): Feed {
    return new Feed(this, sessionId);
  }

  close(): void {
    this.rings.close();
    this.local.clear();
  }
}

const DELTA_KEYS = ['sessionId', 'status', 'delta'];
/** A message.delta's data as emit makes it from runs.ts's `{ delta }`: these three keys, in this order, and nothing else. */
function isPlainDelta(data: SessionEvent['data']): data is { sessionId: string; status: 'processing'; delta: string } {
  let i = 0;
  for (const k in data) if (k !== DELTA_KEYS[i++]) return false;
  return i === DELTA_KEYS.length && typeof data.sessionId === 'string' && data.status === 'processing' && typeof data.delta === 'string';
}

/** An event's SSE frame, on the node that produced it or one the Bus brought it to. */
function eventFrame(event: SessionEventName, data: SessionEvent['data'], id: string): string {
  return event === 'message.delta' && isPlainDelta(data) ? formatDelta(id, data.sessionId, data.delta) : formatEvent(event, data, id);
}

/**
 * The frame formatEvent makes of a delta's { sessionId, status: 'processing', delta }, byte for
 * byte (test/sessions-events.test.ts), without stringifying an object per delta: the event a
 * turn sends most, by thousands a second. The ring's byte count flattens the concatenation once.
 */
export function formatDelta(id: string, sessionId: string, delta: string): string {
  return 'id: ' + id + '\nevent: message.delta\ndata: {"sessionId":' + JSON.stringify(sessionId) + ',"status":"processing","delta":' + JSON.stringify(delta) + '}\n\n';
}

/** Where an event object carries its SSE frame and its number (symbols: never published on the Bus). */
const FRAME = Symbol('frame');
const NUM = Symbol('n');
type Framed = SessionEvent & { [FRAME]?: string; [NUM]?: number };
/**
 * An event another node published (event-wire.ts): its frame as that node made it. Its id and data
 * are read from the frame only if asked for (a stream's reader needs neither).
 */
class WireSessionEvent implements Framed {
  readonly [FRAME]: string;
  readonly [NUM]: number;
  constructor(
    readonly runId: string,
    readonly event: SessionEventName,
    n: number,
    frame: string,
    readonly at: number | undefined,
  ) {
    this[FRAME] = frame;
    this[NUM] = n;
  }

  get id(): string {
    return `${this.runId}:${this[NUM]}`;
  }

  get data(): SessionEvent['data'] {
    const f = this[FRAME];
    return JSON.parse(f.slice(f.indexOf('\ndata: ') + 7, f.length - 2)) as SessionEvent['data'];
  }
}

function wireEvent(p: Uint8Array): WireSessionEvent | undefined {
  const w = decodeWire(p, EVENT_CODES.length);
  return w && new WireSessionEvent(w.runId, EVENT_CODES[w.code], w.n, w.frame, w.at);
}

/** The SSE frame of an event, encoded once however many readers it has. */
function frameOf(e: Framed): string {
  return (e[FRAME] ??= eventFrame(e.event, e.data, e.id));
}

export class Feed {
  private buffer: SessionEvent[] = [];
  private sink?: (e: SessionEvent) => void;
  private unsub: () => void;

  private readonly latency?: { observe(seconds: number): void };

  constructor(events: SessionEvents, private readonly sessionId: string) {
    this.latency = events.deltaLatency;
    this.unsub = events.subscribe(sessionId, (e) => (this.sink ? this.sink(e) : this.buffer.push(e)));
  }

  close(): void {
    this.unsub();
    this.sink = undefined;
    this.buffer = [];
  }

  /**
   * Streams the events of run `runId` into `s` until it ends (or the client
   * leaves). `before` events (replayed from the ring) go first; live events
   * already replayed are skipped by id.
   */
  pipe(s: EventStream, runId: string, opts: { before?: RingEntry[]; afterAccepted?: () => Record<string, unknown> } = {}): Promise<void> {
    return new Promise((resolve) => {
      let last = 0;
      let ended = false;
      const finish = () => {
        if (ended) return;
        ended = true;
        this.close();
        s.end();
        resolve();
      };
      const write = (n: number, event: SessionEventName, frame: string): boolean => {
        if (ended || n <= last) return false;
        // A run's events are numbered without holes (emit): a jump means live events were lost on the way
        // (the bus was down). End the stream rather than hide the hole: the client reconnects with
        // Last-Event-ID and gets them replayed.
        if (last > 0 && n < FINAL_N && n > last + 1) {
          finish();
          return false;
        }
        last = n;
        s.sendRaw(frame);
        if (event === 'accepted' && opts.afterAccepted) s.send('snapshot', { ...opts.afterAccepted(), sessionId: this.sessionId }, `${runId}:${n}`);
        if (event === 'run.completed' || event === 'run.error') finish();
        return true;
      };
      const live = (e: Framed) => {
        if (e.runId !== runId) return;
        const sent = write(e[NUM] ?? Number(e.id.slice(e.id.lastIndexOf(':') + 1)), e.event, frameOf(e));
        if (sent && e.at !== undefined && this.latency) this.latency.observe(Math.max(0, Date.now() - e.at) / 1000);
      };
      s.onClose(finish);
      for (const r of opts.before ?? []) write(r.n, r.event, r.frame);
      for (const e of this.buffer.splice(0)) live(e);
      this.sink = live;
    });
  }
}
