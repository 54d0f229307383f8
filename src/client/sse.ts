// Session event streams for the console and the tests. EventSource cannot
// send an Authorization header, so streams are read with fetch() and parsed
// here: SseParser is the text/event-stream framing, followSession the
// reconnecting reader of one session's turn (Last-Event-ID, backoff).
import type { SessionEventData } from '../sessions/event-schemas.js';
import { ApiError, type AcceptedRun, type NewMessage } from './index.js';

/** One frame as it came over the wire (data not yet parsed). */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
  retry?: number;
}

/**
 * The text/event-stream framing (HTML Living Standard, "event stream
 * interpretation"): lines end in CRLF, LF or CR; a blank line ends a frame;
 * `:` lines are comments; data lines join with LF; one space after the colon
 * is dropped. Text may arrive split anywhere, even between CR and LF.
 */
export class SseParser {
  private buf = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private retry: number | undefined;
  private sawCr = false;

  /** Feeds decoded text; returns the frames it completes. */
  push(text: string): SseFrame[] {
    const out: SseFrame[] = [];
    // A CR ending the previous chunk already ended its line: a LF starting this one is its pair.
    if (this.sawCr && text.startsWith('\n')) text = text.slice(1);
    this.sawCr = false;
    this.buf += text;
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 === this.buf.length) this.sawCr = true;
        else if (this.buf.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  private line(line: string, out: SseFrame[]): void {
    if (line === '') {
      if (this.data.length) {
        const f: SseFrame = { event: this.event || 'message', data: this.data.join('\n') };
        if (this.id !== undefined) f.id = this.id;
        if (this.retry !== undefined) f.retry = this.retry;
        out.push(f);
      }
      this.id = undefined;
      this.event = '';
      this.data = [];
      this.retry = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment (heartbeats)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}

/** A session stream's event, typed by its name from the hub's event schemas. */
export type SessionStreamEvent = { [K in keyof SessionEventData]: { event: K; id?: string; data: SessionEventData[K] } }[keyof SessionEventData];

/** Reads a text/event-stream body frame by frame; `onChunk` hears every chunk (heartbeat comments too). */
export async function* readFrames(body: ReadableStream<Uint8Array>, signal?: AbortSignal, onChunk?: () => void): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  const parser = new SseParser();
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      yield* parser.push(dec.decode(value, { stream: true }));
    }
    yield* parser.push(dec.decode()); // an unfinished last frame is dropped, as the standard says
  } finally {
    signal?.removeEventListener('abort', stop);
    stop();
  }
}

/** How a follow ended. */
export interface FollowEnd {
  /** completed / error: the turn's end event arrived; no-run: no turn to follow; queued: the message waits (the 202 body is in `accepted`); closed: close() was called; gave-up: maxAttempts reconnects failed. */
  reason: 'completed' | 'error' | 'no-run' | 'queued' | 'closed' | 'gave-up';
  /** The turn's end event (completed, error). */
  end?: SessionStreamEvent;
  accepted?: AcceptedRun;
  /** Some events could not be replayed after a reconnect: read the history for the full text. */
  gap: boolean;
  /** How many times the stream was opened again. */
  reconnects: number;
}

export type FollowState =
  | { state: 'connecting' }
  | { state: 'open' }
  | { state: 'reconnecting'; attempt: number; delayMs: number; error?: unknown };

export interface FollowOptions {
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
  sessionId: string;
  /** Start by sending this message and streaming its turn; without it, follow the session's current turn. */
  send?: NewMessage;
  /** Resume after this event id. */
  lastEventId?: string;
  onEvent(e: SessionStreamEvent): void;
  onState?(s: FollowState): void;
  /** First reconnect delay, doubled per failed attempt up to maxDelayMs (defaults 250 and 5000). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Give up after this many reconnects in a row without a frame (default: never). */
  maxAttempts?: number;
  /** No byte (not even the 15 s heartbeat) for this long: the connection is taken as dead (default 40000). */
  idleMs?: number;
}

export interface Follow {
  done: Promise<FollowEnd>;
  close(): void;
  /** The last event id seen (for a later resume). */
  readonly lastEventId: string | undefined;
}

/** `<runId>:<n>` → its parts. */
function splitId(id: string): [string, number] {
  const i = id.lastIndexOf(':');
  return [id.slice(0, i), Number(id.slice(i + 1))];
}

class Retry extends Error {}

/**
 * Streams one turn of a session: the run of the message it sends, or the
 * session's current turn. A stream that drops before the turn's end is opened
 * again (GET /sessions/{id}/events with Last-Event-ID) after a growing delay;
 * events already seen are skipped, so every delta is delivered once. A POST
 * that failed before any answer is not sent again (it may have been
 * accepted): the follow goes on with the session's current turn.
 */
export function followSession(o: FollowOptions): Follow {
  const doFetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  const base = o.baseUrl.replace(/\/+$/, '') + '/api/v1/sessions/' + encodeURIComponent(o.sessionId);
  const minDelay = o.minDelayMs ?? 250;
  const maxDelay = o.maxDelayMs ?? 5000;
  const idleMs = o.idleMs ?? 40_000;
  const closer = new AbortController();
  let lastId = o.lastEventId;
  let gap = false;
  let reconnects = 0;

  const sleep = (ms: number) => new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    closer.signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });

  /** One connection; resolves with the end, or throws Retry / an ApiError. */
  async function once(send: NewMessage | undefined, onFrame: () => void): Promise<FollowEnd | 'dropped'> {
    const ctl = new AbortController();
    const abort = () => ctl.abort();
    closer.signal.addEventListener('abort', abort);
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, idleMs);
    };
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (o.token) headers.Authorization = `Bearer ${o.token}`;
      if (send) headers['Content-Type'] = 'application/json';
      else if (lastId) headers['Last-Event-ID'] = lastId;
      touch();
      let res: Response;
      try {
        res = await doFetch(send ? base + '/messages' : base + '/events', { method: send ? 'POST' : 'GET', headers, body: send ? JSON.stringify(send) : undefined, signal: ctl.signal });
      } catch (e) {
        throw new Retry(String(e));
      }
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream')) {
        const text = await res.text().catch(() => '');
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        if (res.status === 202) return { reason: 'queued', accepted: json, gap, reconnects };
        // A refused message is the caller's to show; a resume refused for overload or an outage is tried again.
        if (!send && (res.status >= 500 || res.status === 429 || res.status === 408)) throw new Retry(`HTTP ${res.status}`);
        throw new ApiError(res.status, String(json?.code ?? res.status), String(json?.message ?? res.statusText));
      }
      o.onState?.({ state: 'open' });
      let noRun = false;
      // Any chunk, the 15 s heartbeat included, shows the connection alive.
      for await (const f of readFrames(res.body!, ctl.signal, touch)) {
        let data: any;
        try {
          data = JSON.parse(f.data);
        } catch {
          continue; // not a frame of ours
        }
        if (f.id && lastId && f.event !== 'snapshot') {
          const [run, n] = splitId(f.id);
          const [lastRun, lastN] = splitId(lastId);
          if (run === lastRun && n <= lastN) continue; // seen before the reconnect
        }
        if (f.id && f.event !== 'snapshot') lastId = f.id;
        onFrame();
        const e = { event: f.event, id: f.id, data } as SessionStreamEvent;
        if (e.event === 'snapshot') {
          // The hub could not replay everything after our id: the history has what was missed.
          if (e.data.resumed === false && lastId) gap = true;
          if (e.data.runId === null) noRun = true;
          if (e.data.runId && !lastId) lastId = f.id;
        }
        // The credential is gone: reconnecting would only meet a 401.
        if (e.event === 'revoked') throw new ApiError(401, e.data.code, e.data.message);
        if (e.event === 'shutdown') continue; // that node is going away: the next connection lands elsewhere
        o.onEvent(e);
        if (e.event === 'run.completed') return { reason: 'completed', end: e, gap, reconnects };
        if (e.event === 'run.error') return { reason: 'error', end: e, gap, reconnects };
      }
      if (closer.signal.aborted) return { reason: 'closed', gap, reconnects };
      // No turn left to follow: after a drop, its end was missed (the history has it).
      if (noRun) return { reason: 'no-run', gap: gap || lastId !== undefined, reconnects };
      return 'dropped';
    } catch (e) {
      if (closer.signal.aborted) return { reason: 'closed', gap, reconnects };
      if (e instanceof ApiError) throw e;
      return 'dropped';
    } finally {
      clearTimeout(idle);
      closer.signal.removeEventListener('abort', abort);
    }
  }

  const done = (async (): Promise<FollowEnd> => {
    let attempt = 0;
    let send = o.send;
    o.onState?.({ state: 'connecting' });
    for (;;) {
      if (closer.signal.aborted) return { reason: 'closed', gap, reconnects };
      let r: FollowEnd | 'dropped';
      try {
        r = await once(send, () => (attempt = 0));
      } catch (e) {
        if (!(e instanceof Retry)) throw e;
        r = 'dropped';
      }
      send = undefined; // never twice: a dropped POST may have been accepted
      if (r !== 'dropped') return r;
      attempt++;
      if (o.maxAttempts !== undefined && attempt > o.maxAttempts) return { reason: 'gave-up', gap, reconnects };
      const delayMs = Math.min(maxDelay, minDelay * 2 ** (attempt - 1));
      o.onState?.({ state: 'reconnecting', attempt, delayMs });
      await sleep(delayMs);
      reconnects++;
    }
  })();

  return {
    done,
    close: () => closer.abort(),
    get lastEventId() {
      return lastId;
    },
  };
}
