// Resuming a turn's events (`Last-Event-ID`) on any node. A run's events are
// numbered and kept (events.ts, the ring) where they are produced: its
// `accepted` on the node that dispatched it, the rest on the node holding the
// host's channel (an abort's final event where the abort arrived). A reader
// whose node did not produce the run asks the other nodes over the Bus
// (`session-replay`, answers on `session-replay:<node>`) and merges what they
// hold by event number. With the in-process Bus everything is local.
import { randomBytes } from 'node:crypto';
import { publishObj, subscribeObj, type Bus } from '../bus/bus.js';
import { FINAL_N, type RingEntry, type SessionEventName, type SessionEvents } from './events.js';
import { RING_MAX_BYTES } from '../limits.js';
import { WindowCounter } from '../ratelimit/window-counter.js';

/** How long a reader waits for the producing node's answer. */
export const RESUME_ASK_MS = 500;
/**
 * Bytes of replays a node publishes for one session per REPLAY_WINDOW_MS (two full rings). An ask is
 * one small GET; its answer up to a ring's 4 MiB, encoded here and carried by Redis: unbounded, a
 * client reconnecting in a loop made this node and Redis move thousands of times what it sent.
 */
export const REPLAY_BUS_BYTES_PER_SESSION = 2 * RING_MAX_BYTES;
export const REPLAY_WINDOW_MS = 10_000;

interface Ask {
  rid: string;
  from: string;
  sid: string;
  run: string;
  after?: number;
}

interface Answer {
  rid: string;
  /** null: that node's window no longer reaches back far enough. */
  entries: Array<[number, SessionEventName, string]> | null;
}

export interface Resumed {
  /** The run whose live events follow (the running one, or the one `Last-Event-ID` names while a ring still holds it). */
  runId?: string;
  /** Events to send first; null when they cannot all be replayed (the reader gets live events only). */
  replay: RingEntry[] | null;
}

export class SessionResume {
  private readonly waiting = new Map<string, (a: Answer) => void>();
  private readonly offs: Array<() => void> = [];
  /** Replay bytes this node published per session in the current window. */
  private readonly published = new WindowCounter(REPLAY_BUS_BYTES_PER_SESSION, REPLAY_WINDOW_MS);

  constructor(
    private readonly events: SessionEvents,
    private readonly bus: Bus,
    private readonly nodeId: string,
  ) {
    if (bus.kind === 'local') return;
    this.offs.push(subscribeObj<Ask>(bus, 'session-replay', (m) => this.answer(m)));
    this.offs.push(subscribeObj<Answer>(bus, `session-replay:${nodeId}`, (m) => this.waiting.get(m.rid)?.(m)));
  }

  /**
   * What a reader of session `sessionId` gets: `running` is the session's running run, if any;
   * `lastId` the `Last-Event-ID` it sent, if any.
   */
  async resume(sessionId: string, running: string | undefined, lastId: string | undefined): Promise<Resumed> {
    const [lastRun, lastN] = lastId ? [lastId.slice(0, lastId.lastIndexOf(':')), Number(lastId.slice(lastId.lastIndexOf(':') + 1))] : [];
    const runId = running ?? lastRun;
    if (!runId) return { replay: null };
    // An id of an older turn: the current turn's live events only.
    if (lastId && lastRun !== runId) return { runId, replay: null };
    const after = lastId ? lastN : undefined;
    const sources: Array<RingEntry[] | null> = [];
    const local = this.events.replay(sessionId, runId, after);
    if (local !== undefined) sources.push(local);
    // This node produced the run (it holds more than its `accepted` or an abort's end): nothing to ask.
    const produced = local === null || (local ?? []).some((e) => e.n >= 2 && e.n < FINAL_N);
    if (!produced && this.bus.kind !== 'local') {
      const answers = await this.ask(sessionId, runId, after);
      // Resuming after an event when no node answered (the bus reconnecting, the producer gone): what was
      // missed is unknown, so the reader is told it was not replayed rather than given a silent gap.
      if (lastId && !answers.length) return { runId, replay: null };
      sources.push(...answers);
    }
    if (!sources.length) return running ? { runId, replay: lastId ? null : [] } : { replay: null };
    if (sources.some((s) => s === null)) return { runId, replay: null };
    const merged = new Map<number, RingEntry>();
    for (const s of sources as RingEntry[][]) for (const e of s) merged.set(e.n, e);
    return { runId, replay: [...merged.values()].sort((a, b) => a.n - b.n) };
  }

  /** Asks the other nodes; resolves with the first answer that holds the producer's events, or what came before the timeout. */
  private ask(sid: string, run: string, after: number | undefined): Promise<Array<RingEntry[] | null>> {
    const rid = randomBytes(8).toString('hex');
    const got: Array<RingEntry[] | null> = [];
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(rid);
        resolve(got);
      };
      const timer = setTimeout(done, RESUME_ASK_MS);
      timer.unref?.();
      this.waiting.set(rid, (a) => {
        const entries = a.entries && a.entries.map(([n, event, frame]) => ({ n, event, frame }));
        got.push(entries);
        if (entries === null || entries.some((e) => e.n >= 2 && e.n < FINAL_N)) done();
      });
      publishObj(this.bus, 'session-replay', { rid, from: this.nodeId, sid, run, ...(after !== undefined ? { after } : {}) } satisfies Ask);
    });
  }

  /** Another node's reader asks: answer when this node's ring holds that run. */
  private answer(m: Ask): void {
    if (m.from === this.nodeId) return;
    const entries = this.events.replay(m.sid, m.run, m.after);
    if (entries === undefined) return;
    publishObj(this.bus, `session-replay:${m.from}`, { rid: m.rid, entries: entries && this.withinBudget(m.sid, entries) ? entries.map((e) => [e.n, e.event, e.frame]) : null } satisfies Answer);
  }

  /** Counts `entries` against the session's replay budget; false (nothing counted) when they do not fit. */
  private withinBudget(sessionId: string, entries: RingEntry[]): boolean {
    let bytes = 0;
    for (const e of entries) bytes += e.frame.length; // UTF-16 units: a bound, not a bill
    return this.published.take(sessionId, bytes);
  }

  close(): void {
    for (const off of this.offs.splice(0)) off(); // readers still waiting get what came, at their timeout
  }
}
