// Server-Sent Events over a uWS response. Every write is corked (it happens
// after an await); a comment heartbeat keeps proxies from closing the stream.
import type { HttpResponse } from './uws.js';

export const SSE_HEARTBEAT_MS = 15_000;

export interface EventStream {
  /** Sends one frame; returns false once the client is gone. */
  send(event: string, data: unknown, id?: string | number): boolean;
  /** Sends a frame made by formatEvent: one encoding shared by every reader of an event. */
  sendRaw(frame: string): boolean;
  comment(text: string): void;
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
  return (id === undefined ? ['event: ', event, '\ndata: ', JSON.stringify(data), '\n\n'] : ['id: ', String(id), '\nevent: ', event, '\ndata: ', JSON.stringify(data), '\n\n']).join('');
}

export function openEventStream(res: HttpResponse, isAborted: () => boolean, onAbort: (cb: () => void) => void, heartbeatMs = SSE_HEARTBEAT_MS): EventStream {
  let closed = false;
  const closers: Array<() => void> = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
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
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const chunk = pending.length === 1 ? pending[0] : pending.join('');
    pending = [];
    if (!closed && !isAborted()) res.cork(() => res.write(chunk));
  };
  const write = (chunk: string) => {
    if (closed || isAborted()) return false;
    pending.push(chunk);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return true;
  };
  res.cork(() => {
    res
      .writeStatus('200 OK')
      .writeHeader('Content-Type', 'text/event-stream; charset=utf-8')
      .writeHeader('Cache-Control', 'no-cache, no-transform')
      .writeHeader('X-Accel-Buffering', 'no')
      .write(': stream open\n\n');
  });
  const timer = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
  timer.unref?.();
  return {
    send(event, data, id) {
      return write(formatEvent(event, data, id));
    },
    sendRaw: write,
    comment(text) {
      write(`: ${text.replace(/\n/g, ' ')}\n\n`);
    },
    end() {
      if (closed) return;
      flush();
      if (!isAborted()) res.cork(() => res.end());
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
