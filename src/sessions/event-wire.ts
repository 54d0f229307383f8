// A session event as the Redis Bus carries it between nodes: its SSE frame as
// the producing node encoded it for its own ring, behind a small fixed header
// (event, number, when its host frame arrived, run id). Every node's reader
// writes that frame as it is; nothing is re-encoded as MessagePack on the way
// and made into JSON again on the other side (a cluster node publishes each
// delta, bench/RESULTS.md, thirty-first session). The first byte is 0xc1,
// which MessagePack never uses, so a payload of a node from before this format
// (a MessagePack map) is still told apart and read.
//
//   0xc1 | event code u8 | n f64 | at f64 (NaN: none) | runId bytes u16 | runId | frame
import { utf8Slice } from '../../host-protocol/native-strings.js';

export const WIRE_TAG = 0xc1;
const HEAD = 1 + 1 + 8 + 8 + 2;
/** A run id longer than this is not a run id (ids are short; the header holds its length in 16 bits). */
const RUN_ID_MAX = 1024;

export interface WireEvent {
  code: number;
  n: number;
  at: number | undefined;
  runId: string;
  frame: string;
}

export function encodeWire(code: number, n: number, at: number | undefined, runId: string, frame: string): Uint8Array {
  const idLen = Buffer.byteLength(runId);
  if (idLen > RUN_ID_MAX) throw new Error('run id too long for the bus');
  const buf = Buffer.allocUnsafe(HEAD + idLen + Buffer.byteLength(frame));
  buf[0] = WIRE_TAG;
  buf[1] = code;
  buf.writeDoubleLE(n, 2);
  buf.writeDoubleLE(at ?? NaN, 10);
  buf.writeUInt16LE(idLen, 18);
  buf.write(runId, HEAD, idLen, 'utf8');
  buf.write(frame, HEAD + idLen, 'utf8');
  return buf;
}

/** The event in `p`, or undefined when `p` is not one (malformed, or not this format). */
export function decodeWire(p: Uint8Array, codes: number): WireEvent | undefined {
  if (p.length < HEAD || p[0] !== WIRE_TAG || p[1] >= codes) return undefined;
  const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const n = view.getFloat64(2, true);
  const at = view.getFloat64(10, true);
  const idLen = view.getUint16(18, true);
  if (!Number.isInteger(n) || n < 1 || idLen === 0 || idLen > RUN_ID_MAX || HEAD + idLen > p.length) return undefined;
  return { code: p[1], n, at: Number.isNaN(at) ? undefined : at, runId: utf8Slice.call(p, HEAD, HEAD + idLen), frame: utf8Slice.call(p, HEAD + idLen, p.length) };
}
