import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const B36 = ALPHABET.slice(0, 36);

// Random bytes are drawn from the CSPRNG 4 KiB at a time and each is used once: an id no longer
// costs a call into the CSPRNG and a Buffer of its own (about 2 µs and a young-generation
// ArrayBuffer per id, three or four ids per message; bench/RESULTS.md, twenty-first session).
const pool = Buffer.allocUnsafe(4096);
let taken = pool.length;
/** Characters of the id being made, as char codes (ids are ASCII): one string made per id. */
const chars = Buffer.allocUnsafe(64);

/** `len` characters of `alphabet`, each uniform (bytes past the alphabet's last whole multiple are drawn again). */
function randomChars(len: number, alphabet: string): string {
  if (len > chars.length) return randomChars(chars.length, alphabet) + randomChars(len - chars.length, alphabet);
  const limit = 256 - (256 % alphabet.length);
  for (let n = 0; n < len; ) {
    if (taken === pool.length) {
      randomFillSync(pool);
      taken = 0;
    }
    const b = pool[taken++]!;
    if (b < limit) chars[n++] = alphabet.charCodeAt(b % alphabet.length);
  }
  return chars.toString('latin1', 0, len);
}

/** Random base62 string; 16 characters carry ~95 bits. */
export const randomId = (len = 16): string => randomChars(len, ALPHABET);

/** `usr_…`, `key_…`: the prefix says what an id names. */
export const newId = (prefix: string, len = 16) => `${prefix}${prefix.endsWith('-') ? '' : '_'}${randomId(len)}`;

/**
 * `run_…`, `msg_…`: ids of the rows every message writes. The creation time comes first (9 base-36
 * digits of milliseconds, good until the year 5188), then 12 random base-36 characters (62 bits), all
 * in [0-9a-z] so any collation orders them by time: a table's primary key then grows at its right
 * edge instead of at a random page (no page splits in the middle, and after a checkpoint one
 * full-page image for the edge instead of one per random page touched; bench/id-order-wal.sql).
 */
export function timeOrderedId(prefix: string, now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomChars(12, B36)}`;
}
