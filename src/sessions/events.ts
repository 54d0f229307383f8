// Session events: published on the Bus topic `session:<id>` (after the state
// they describe is committed), kept in a bounded ring per session on the node
// that produces them so `Last-Event-ID` can resume the current turn, and piped
// into SSE streams. Event ids are `<runId>:<n>`, increasing within a run.
import type { Bus } from '../bus/bus.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import { formatEvent, type EventStream } from '../server/sse.js';

export type SessionEventName = 'accepted' | 'snapshot' | 'message.delta' | 'tool.started' | 'tool.completed' | 'run.completed' | 'run.error';

export interface SessionEvent {
  /** `<runId>:<n>` */
  id: string;
  runId: string;
  event: SessionEventName;
  data: { sessionId: string; status: string; [k: string]: unknown };
}

/** Events kept per session for resumption (the current turn only). */
export const RING_SIZE = 2000;
/** How long a finished turn's ring stays for late resumers. */
export const RING_KEEP_MS = 60_000;

const FINAL_N = 2 ** 50;
const isEnd = (e: SessionEvent) => e.event === 'run.completed' || e.event === 'run.error';

interface Ring {
  runId: string;
  events: SessionEvent[];
  dropped: number;
  timer?: NodeJS.Timeout;
}

export class SessionEvents {
  private rings = new Map<string, Ring>();
  private counters = new Map<string, number>();

  /** In-process readers per session, used instead of the Bus when it is the single-process one (no MessagePack round trip per delta). */
  private readonly local = new Map<string, Set<(e: SessionEvent) => void>>();

  constructor(private readonly bus: Bus) {}

  /** Subscribes to a session's events (from any node). */
  subscribe(sessionId: string, handler: (e: SessionEvent) => void): () => void {
    if (this.bus.kind !== 'local') return subscribeObj<SessionEvent>(this.bus, `session:${sessionId}`, handler);
    let set = this.local.get(sessionId);
    if (!set) this.local.set(sessionId, (set = new Set()));
    set.add(handler);
    return () => {
      set!.delete(handler);
      if (!set!.size && this.local.get(sessionId) === set) this.local.delete(sessionId);
    };
  }

  /** Publishes one event of a run; the producer node also keeps it in the ring. */
  emit(sessionId: string, runId: string, event: SessionEventName, data: Record<string, unknown>, opts: { last?: boolean } = {}): void {
    // An end published by a node that did not produce the run (abort) must still sort after every event of it.
    // Several nodes may number one run: the dispatching node emits `accepted` (1), the node holding the
    // host's channel the rest, so a node that did not emit `accepted` starts after it, and a run's end
    // always sorts last (readers drop ids at or below the last they saw).
    const n = opts.last || event === 'run.completed' || event === 'run.error' ? FINAL_N : (this.counters.get(runId) ?? (event === 'accepted' ? 0 : 1)) + 1;
    this.counters.set(runId, n);
    const ev: SessionEvent = { id: `${runId}:${n}`, runId, event, data: { sessionId, status: 'processing', ...data } };
    let ring = this.rings.get(sessionId);
    if (!ring || ring.runId !== runId) {
      if (ring?.timer) clearTimeout(ring.timer);
      if (ring) this.counters.delete(ring.runId);
      ring = { runId, events: [], dropped: 0 };
      this.rings.set(sessionId, ring);
    }
    ring.events.push(ev);
    if (ring.events.length > RING_SIZE) {
      ring.events.shift();
      ring.dropped++;
    }
    if (isEnd(ev)) {
      const r = ring;
      r.timer = setTimeout(() => {
        if (this.rings.get(sessionId) === r) this.rings.delete(sessionId);
        this.counters.delete(runId);
      }, RING_KEEP_MS);
      r.timer.unref?.();
    }
    if (this.bus.kind !== 'local') return publishObj(this.bus, `session:${sessionId}`, ev);
    const set = this.local.get(sessionId);
    if (set) for (const h of [...set]) {
      try {
        h(ev);
      } catch {
        // A failing reader must not stop delivery to the others.
      }
    }
  }

  /** Events of the session's latest turn after `afterId` (undefined: from the start); null when the window no longer holds it. */
  replay(sessionId: string, afterId?: string): SessionEvent[] | null {
    const ring = this.rings.get(sessionId);
    if (!ring) return afterId ? null : [];
    if (!afterId) return ring.dropped ? null : [...ring.events];
    const [runId, nStr] = afterId.split(':');
    const n = Number(nStr);
    if (runId !== ring.runId || !Number.isInteger(n)) return null;
    if (n < ring.dropped) return null;
    return ring.events.filter((e) => Number(e.id.split(':')[1]) > n);
  }

  /** The run whose events the ring holds for this session, if any. */
  ringRun(sessionId: string): string | undefined {
    return this.rings.get(sessionId)?.runId;
  }

  /** Subscribes now and buffers until a stream is attached (nothing published meanwhile is missed). */
  feed(sessionId: string): Feed {
    return new Feed(this, sessionId);
  }

  close(): void {
    for (const r of this.rings.values()) if (r.timer) clearTimeout(r.timer);
    this.rings.clear();
    this.local.clear();
  }
}

const frames = new WeakMap<SessionEvent, string>();
/** The SSE frame of an event, encoded once however many readers it has. */
function frameOf(e: SessionEvent): string {
  let f = frames.get(e);
  if (f === undefined) frames.set(e, (f = formatEvent(e.event, e.data, e.id)));
  return f;
}

export class Feed {
  private buffer: SessionEvent[] = [];
  private sink?: (e: SessionEvent) => void;
  private unsub: () => void;

  constructor(events: SessionEvents, sessionId: string) {
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
  pipe(s: EventStream, runId: string, opts: { before?: SessionEvent[]; afterAccepted?: () => Record<string, unknown> } = {}): Promise<void> {
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
      const write = (e: SessionEvent) => {
        if (ended || e.runId !== runId) return;
        const n = Number(e.id.split(':')[1]);
        if (n <= last) return;
        last = n;
        s.sendRaw(frameOf(e));
        if (e.event === 'accepted' && opts.afterAccepted) s.send('snapshot', { ...opts.afterAccepted(), sessionId: e.data.sessionId }, e.id);
        if (isEnd(e)) finish();
      };
      s.onClose(finish);
      for (const e of opts.before ?? []) write(e);
      for (const e of this.buffer.splice(0)) write(e);
      this.sink = write;
    });
  }
}
