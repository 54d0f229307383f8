// A host's heartbeat, `{t: 'ping', id, ts}`, is most of what an idle fleet
// sends, and its answer `{t: 'pong', id, ts}` carries the same values in the
// same shape. So a ping in the form the reference CLI writes it is recognised
// from its bytes and turned into its pong by changing one letter: no decode,
// no schema check, no encode, no garbage. Anything else — another key order,
// an id or ts in another encoding than the shortest, an extra key, trailing
// bytes — answers false and takes the general path (codec.ts), whose every
// check applies.
// test/ping.test.ts holds this to the general path's answers.

const FIXMAP_2 = 0x82;
const FIXMAP_3 = 0x83;

/** fixstr "t", fixstr "ping" — the frame's first key and value, after the map header. */
const HEAD = [0xa1, 0x74, 0xa4, 0x70, 0x69, 0x6e, 0x67];
/** fixstr "id" */
const ID_KEY = [0xa2, 0x69, 0x64];
/** fixstr "ts" */
const TS_KEY = [0xa2, 0x74, 0x73];
/** Where "ping"'s "i" is: the pong's "o". */
const VOWEL_AT = 1 + 3 + 1;

function matches(b: Uint8Array, at: number, bytes: number[]): boolean {
  if (at + bytes.length > b.length) return false;
  for (let i = 0; i < bytes.length; i++) if (b[at + i] !== bytes[i]) return false;
  return true;
}

/** The smallest value each unsigned integer encoding holds in its shortest form (an encoder's choice). */
const SHORTEST_FROM: Record<number, number> = { 1: 0x80, 2: 0x100, 4: 0x1_0000, 8: 0x1_0000_0000 };

/**
 * The length of an unsigned integer ≥ `min` at `at`, in its shortest encoding (positive fixint,
 * uint 8/16/32, and uint 64 below 2^53 when `wide`), or 0 when there is none. Shortest only: the
 * pong's bytes are then exactly those the general path's encoder would write.
 */
function uintAt(b: Uint8Array, at: number, min: number, wide: boolean): number {
  if (at >= b.length) return 0;
  const tag = b[at];
  if (tag <= 0x7f) return tag >= min ? 1 : 0;
  const size = tag === 0xcc ? 1 : tag === 0xcd ? 2 : tag === 0xce ? 4 : tag === 0xcf && wide ? 8 : 0;
  if (!size || at + 1 + size > b.length) return 0;
  if (size === 8 && (b[at + 1] !== 0 || b[at + 2] > 0x1f)) return 0; // ≥ 2^53: not exact as a number
  let v = 0;
  for (let i = 1; i <= size; i++) v = v * 256 + b[at + i];
  return v >= min && v >= SHORTEST_FROM[size] ? 1 + size : 0;
}

/**
 * Whether `b` is a ping frame in the CLI's form: a map of `t`, `id` (an integer ≥ 1) and
 * optionally `ts` (an integer ≥ 0), in that order, and nothing after it.
 */
export function isPlainPing(b: Uint8Array): boolean {
  const keys = b[0] === FIXMAP_3 ? 3 : b[0] === FIXMAP_2 ? 2 : 0;
  if (!keys || !matches(b, 1, HEAD) || !matches(b, 1 + HEAD.length, ID_KEY)) return false;
  let at = 1 + HEAD.length + ID_KEY.length;
  const id = uintAt(b, at, 1, false);
  if (!id) return false;
  at += id;
  if (keys === 3) {
    if (!matches(b, at, TS_KEY)) return false;
    at += TS_KEY.length;
    const ts = uintAt(b, at, 0, true);
    if (!ts) return false;
    at += ts;
  }
  return at === b.length;
}

/** Turns a plain ping's bytes (isPlainPing) into its pong's, in place. */
export function pingToPong(b: Uint8Array): Uint8Array {
  b[VOWEL_AT] = 0x6f; // "ping" → "pong"
  return b;
}
