import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Random base62 string; 16 characters carry ~95 bits. */
export function randomId(len = 16): string {
  const bytes = randomBytes(len * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < len; i++) {
    const b = bytes[i];
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out.length === len ? out : out + randomId(len - out.length);
}

/** `usr_…`, `key_…`: the prefix says what an id names. */
export const newId = (prefix: string, len = 16) => `${prefix}${prefix.endsWith('-') ? '' : '_'}${randomId(len)}`;

const B36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `run_…`, `msg_…`: ids of the rows every message writes. The creation time comes first (9 base-36
 * digits of milliseconds, good until the year 5188), then 12 random base-36 characters (62 bits), all
 * in [0-9a-z] so any collation orders them by time: a table's primary key then grows at its right
 * edge instead of at a random page (no page splits in the middle, and after a checkpoint one
 * full-page image for the edge instead of one per random page touched; bench/id-order-wal.sql).
 */
export function timeOrderedId(prefix: string, now = Date.now()): string {
  const bytes = randomBytes(24);
  let rnd = '';
  for (let i = 0; i < bytes.length && rnd.length < 12; i++) if (bytes[i] < 252) rnd += B36[bytes[i] % 36];
  if (rnd.length < 12) return timeOrderedId(prefix, now); // 24 draws under 252 of 256: practically always enough
  return `${prefix}_${now.toString(36).padStart(9, '0')}${rnd}`;
}
