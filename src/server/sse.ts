// Server-Sent Events over a uWS response. Every write is corked (it happens
// after an await); a comment heartbeat keeps proxies from closing the stream.
import type { HttpResponse } from './uws.js';

export const SSE_HEARTBEAT_MS = 15_000;

export interface EventStream {
  /** Sends one frame; returns false once the client is gone. */
  send(event: string, data: unknown, id?: string | number): boolean;
  /** Sends a frame made by formatEvent: one encoding shared by every reader of an event. */
  sendRaw(frame: string): boolean;
  /** Ends the response. Safe to call twice. */
  end(): void;
  readonly closed: boolean;
  onClose(cb: () => void): void;
}

/**
 * One SSE frame. Built with join, which makes one flat string: a template
 * literal makes a tree of pieces, and frames kept for replay would cost the
 * garbage collector every piece.
 */
export function formatEvent(event: string, data: unknown, id?: string | number): string {
  return (id === undefined ? ['event: ', event, '\ndata: ', JSON.stringify(data), '\n\n'] : ['id: ', idText(id), '\nevent: ', event, '\ndata: ', JSON.stringify(data), '\n\n']).join('');
}

/** An id on one line: a client's Last-Event-ID is echoed, and a line break in it wrote an event of its own. */
function idText(id: string | number): string {
  return typeof id === 'string' && /[\r\n\0]/.test(id) ? id.replace(/[\r\n\0]/g, '') : String(id);
}

/** Streams with frames to flush at the end of this event-loop turn: one setImmediate for all of them, not one per stream. */
let due: Array<() => void> = [];
function flushSoon(flush: () => void): void {
  if (due.push(flush) === 1) setImmediate(flushDue);
}
function flushDue(): void {
  const now = due;
  due = [];
  for (const f of now) {
    try {
      f();
    } catch {
      // One stream's failure must not keep the others' frames back.
    }
  }
}

/** Bytes held for SSE readers across every stream of this process (the hub's share of slow readers). */
export class SseGauge {
  buffered = 0;
}

export interface StreamLimits {
  /** Most bytes held for one reader (queued here plus left in uWS's buffer) before it is dropped. */
  bufferBytes: number;
  gauge?: SseGauge;
  heartbeatMs?: number;
  /** More response headers (CORS). */
  headers?: Record<string, string>;
}

export const SSE_BUFFER_BYTES = 1024 * 1024;

export function openEventStream(res: HttpResponse, isAborted: () => boolean, onAbort: (cb: () => void) => void, limits: StreamLimits = { bufferBytes: SSE_BUFFER_BYTES }): EventStream {
  const heartbeatMs = limits.heartbeatMs ?? SSE_HEARTBEAT_MS;
  const gauge = limits.gauge ?? new SseGauge();
  let closed = false;
  const closers: Array<() => void> = [];
  // Backpressure: once uWS reports a write it could not pass to the kernel, nothing more goes
  // to uWS until onWritable; frames wait here. `held` bounds what uWS keeps (the failed writes)
  // plus what waits here; a reader that lets it pass bufferBytes is dropped.
  let congested = false;
  let inUws = 0;
  let pending: string[] = [];
  let pendingBytes = 0;
  const setHeld = (queued: number, uwsBytes: number) => {
    gauge.buffered += queued + uwsBytes - (pendingBytes + inUws);
    pendingBytes = queued;
    inUws = uwsBytes;
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    pending = [];
    setHeld(0, 0);
    for (const cb of closers.splice(0)) {
      try {
        cb();
      } catch {
        /* a close callback must not break the others */
      }
    }
  };
  onAbort(finish);
  // Frames written in one event-loop turn go out in one corked write: a busy
  // turn streams many deltas, and one syscall per frame would cost more than the frames.
  // Several frames are joined into one string first: one native write per flush costs less than
  // one per frame once a turn holds more than a few (at 100,000 deltas/s per-frame writes fell behind).
  let scheduled = false;
  let toWrite = '';
  let wrote = true;
  const writeIt = () => {
    wrote = res.write(toWrite);
  };
  /** Passes `chunks` (`bytes` in all) to uWS; false when uWS is now holding some of it. */
  const push = (chunks: string[], bytes: number): boolean => {
    toWrite = chunks.length === 1 ? chunks[0] : chunks.join('');
    res.cork(writeIt);
    toWrite = '';
    setHeld(0, wrote ? 0 : inUws + bytes);
    return wrote;
  };
  const flush = () => {
    scheduled = false;
    if (!pending.length || congested || closed || isAborted()) return;
    const chunks = pending;
    const bytes = pendingBytes;
    pending = [];
    pendingBytes = 0;
    gauge.buffered -= bytes;
    if (!push(chunks, bytes)) congested = true;
  };
  const drop = () => {
    // The reader stopped reading: cut it rather than hold its frames.
    if (!closed && !isAborted()) res.close();
    finish();
  };
  const write = (chunk: string) => {
    if (closed || isAborted()) return false;
    const size = Buffer.byteLength(chunk);
    if (congested && pendingBytes + size + inUws > limits.bufferBytes) {
      drop();
      return false;
    }
    pending.push(chunk);
    setHeld(pendingBytes + size, inUws);
    if (congested) return true;
    // A busy turn may queue a lot: past a quarter of the bound it goes to uWS now.
    if (pendingBytes >= limits.bufferBytes / 4) flush();
    else if (!scheduled) {
      scheduled = true;
      flushSoon(flush);
    }
    return true;
  };
  res.onWritable(() => {
    if (closed || isAborted()) return true;
    congested = false;
    // Writing drains uWS's buffer first; with nothing waiting, a comment does it (uWS does not drain alone while onWritable is set).
    if (!pending.length) {
      pending.push(': \n\n');
      pendingBytes += 4;
      gauge.buffered += 4;
    }
    flush();
    return !congested;
  });
  res.cork(() => {
    res
      .writeStatus('200 OK')
      .writeHeader('Content-Type', 'text/event-stream; charset=utf-8')
      .writeHeader('Cache-Control', 'no-cache, no-transform')
      .writeHeader('X-Accel-Buffering', 'no');
    if (limits.headers) for (const k in limits.headers) res.writeHeader(k, limits.headers[k]);
    res.write(': stream open\n\n');
  });
  const timer = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
  timer.unref?.();
  return {
    send(event, data, id) {
      return write(formatEvent(event, data, id));
    },
    sendRaw: write,
    end() {
      if (closed) return;
      // What waits is bounded by bufferBytes: hand it to uWS with the end.
      const rest = pending.join('');
      if (!isAborted()) res.cork(() => (rest ? res.end(rest) : res.end()));
      finish();
    },
    get closed() {
      return closed || isAborted();
    },
    onClose(cb) {
      if (closed) cb();
      else closers.push(cb);
    },
  };
}
