// The bounded body reader. A body over the limit is read and thrown away up
// to DISCARD_BYTES before the 413 goes out: a client still sending when the
// hub closes would get a reset and lose the answer. Past that bound the 413
// goes out and the connection is half-closed after it (uWS shuts down the
// write side once the answer is written), so a client sending without end
// costs no more than that.
import type { HttpResponse } from './uws.js';

/** How much of an oversized body is read and discarded before answering. */
export const DISCARD_BYTES = 8 * 1024 * 1024;

export interface BodyCallbacks {
  /** The whole body, within the limit. */
  done(raw: Buffer): void;
  /** Over the limit: answer 413; `close` when the client is still sending past DISCARD_BYTES. */
  tooLarge(close: boolean): void;
  /** True once the response was answered or aborted. */
  finished(): boolean;
}

/** `declared` is the Content-Length (NaN when absent). */
export function readBody(res: HttpResponse, limit: number, declared: number, cb: BodyCallbacks, discardBytes = DISCARD_BYTES): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let over = declared > limit;
  res.onData((ab, isLast) => {
    if (cb.finished()) return;
    received += ab.byteLength;
    if (!over && received > limit) {
      over = true;
      chunks.length = 0;
    }
    if (over) {
      if (isLast) cb.tooLarge(false);
      else if (received > discardBytes) cb.tooLarge(true);
      return;
    }
    // uWS neuters the ArrayBuffer after this callback: copy it.
    chunks.push(Buffer.from(Buffer.from(ab)));
    if (isLast) cb.done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  });
}
