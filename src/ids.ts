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
