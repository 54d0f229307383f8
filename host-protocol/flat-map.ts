// The frame a host sends most, run.delta, is a MessagePack map of three short
// strings. @msgpack/msgpack spends about 0.7 µs on it (a DataView per call, its
// state machine, a native call per string); this reads such a map — a fixmap
// whose keys and values are all strings — in about a third of that, and says
// `undefined` for anything else (another type, a truncated or over-long frame,
// trailing bytes, a `__proto__` key, a string over the limit), which then goes to
// the library, so every error and limit stays the library's. The schema check
// runs on the result as on any frame. test/flat-map.test.ts holds it to the
// library's answers.
import { utf8Slice } from './native-strings.js';

/**
 * Keys come from a small cache checked byte by byte: no native call, no new string. Values do not:
 * measured, a cache for them (tags, run ids) cost more than it saved, the texts of deltas pushing
 * the rest out.
 */
const KEY_MAX = 32;
const SLOTS = 256;
const keys: Array<string | undefined> = new Array(SLOTS).fill(undefined);

function cachedKey(b: Uint8Array, start: number, end: number): string {
  let h = end - start;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + b[i]) | 0;
  const slot = h & (SLOTS - 1);
  const hit = keys[slot];
  if (hit !== undefined && hit.length === end - start) {
    let same = true;
    for (let i = 0; i < hit.length; i++) if (hit.charCodeAt(i) !== b[start + i]) { same = false; break; }
    if (same) return hit;
  }
  const s = utf8Slice.call(b, start, end);
  keys[slot] = s;
  return s;
}

function isAscii(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] > 0x7f) return false;
  return true;
}

/** The string at `p` (fixstr, str8, str16 or str32): [start, end], or undefined when `p` holds no string or it runs past the frame. */
function strAt(b: Uint8Array, p: number, out: { start: number; end: number }): boolean {
  const h = b[p];
  let len: number;
  let start: number;
  if (h >= 0xa0 && h <= 0xbf) {
    len = h & 0x1f;
    start = p + 1;
  } else if (h === 0xd9) {
    len = b[p + 1];
    start = p + 2;
  } else if (h === 0xda) {
    len = (b[p + 1] << 8) | b[p + 2];
    start = p + 3;
  } else if (h === 0xdb) {
    len = b[p + 1] * 0x1000000 + ((b[p + 2] << 16) | (b[p + 3] << 8) | b[p + 4]);
    start = p + 5;
  } else return false;
  // A header cut short reads undefined bytes: NaN fails the bound below.
  if (!(start + len <= b.length)) return false;
  out.start = start;
  out.end = start + len;
  return true;
}

const at = { start: 0, end: 0 };

/**
 * A fixmap of string keys and string values, decoded; undefined for any other
 * bytes (the caller decodes those with the library). `maxStrLength`: the
 * library's limit in bytes, beyond which it refuses a string.
 */
export function decodeFlatStringMap(b: Uint8Array, maxStrLength: number): Record<string, string> | undefined {
  const h = b[0];
  if (h === undefined || h < 0x80 || h > 0x8f) return undefined;
  const n = h & 0x0f;
  const out: Record<string, string> = {};
  let p = 1;
  for (let i = 0; i < n; i++) {
    if (!strAt(b, p, at)) return undefined;
    const ks = at.start, ke = at.end;
    if (ke - ks > KEY_MAX || !isAscii(b, ks, ke)) return undefined;
    const key = cachedKey(b, ks, ke);
    if (key === '__proto__') return undefined;
    if (!strAt(b, ke, at)) return undefined;
    const vs = at.start, ve = at.end;
    if (ve - vs > maxStrLength) return undefined;
    out[key] = utf8Slice.call(b, vs, ve);
    p = ve;
  }
  return p === b.length ? out : undefined;
}
