// idempotency-key on POST /sessions: the same key and the same body within
// 24 hours replays the first answer and creates nothing; the same key with a
// different body is a 409. Records are per user and written in the creating
// transaction, so a concurrent duplicate loses the insert and replays.
import { createHash } from 'node:crypto';
import { fail } from '../errors.js';
import { one, rows, type Em } from './sql.js';

export const IDEMPOTENCY_WINDOW = `interval '24 hours'`;

export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** Canonical JSON (sorted keys) so that field order does not change the hash. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export const bodyHash = (body: unknown) => createHash('sha256').update(canonical(body)).digest('hex');

/** The earlier answer for this key, or undefined; 409 when the key was used with another body. */
export async function findAnswer(em: Em, userId: string, key: string, hash: string): Promise<StoredAnswer | undefined> {
  const r = await one<{ body_hash: string; response: StoredAnswer }>(em,
    `select body_hash, response from session_idempotency where user_id = ? and key = ? and created_at > now() - ${IDEMPOTENCY_WINDOW}`, [userId, key]);
  if (!r) return undefined;
  if (r.body_hash !== hash) throw fail('IDEMPOTENCY_MISMATCH');
  return typeof r.response === 'string' ? JSON.parse(r.response) : r.response;
}

export class IdempotencyRace extends Error {}

/** Inside the creating transaction; throws IdempotencyRace when a concurrent request took the key first. */
export async function storeAnswer(em: Em, userId: string, key: string, hash: string, answer: StoredAnswer): Promise<void> {
  // The user's records past the window go, this key's and the others' (a spent record was deleted only
  // when its own key came back: the table grew for good); the user's live ones stay under a day's creations.
  await rows(em, `delete from session_idempotency where user_id = ? and created_at <= now() - ${IDEMPOTENCY_WINDOW}`, [userId]);
  const ins = await rows(em,
    `insert into session_idempotency (user_id, key, body_hash, response) values (?, ?, ?, ?::jsonb) on conflict do nothing returning key`,
    [userId, key, hash, JSON.stringify(answer)]);
  if (!ins.length) throw new IdempotencyRace();
}
