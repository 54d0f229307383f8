// Raw SQL through MikroORM's connection, inside or outside a transaction.
// The session hot paths (accept, claim, batched history) are written in SQL so
// that each is one round trip with the locks it needs.
import type { EntityManager } from '@mikro-orm/postgresql';
import { direct } from '../db/direct.js';

export type Em = EntityManager;
/** What raw SQL needs of an EntityManager (rows, bound, one): its connection and transaction, never entities. */
export type SqlEm = Pick<EntityManager, 'getConnection' | 'getTransactionContext'>;

export function rows<T = any>(em: SqlEm, sql: string, params: unknown[] = []): Promise<T[]> {
  return em.getConnection().execute<T[]>(sql, params, 'all', em.getTransactionContext());
}

/**
 * `rows` with the parameters sent to PostgreSQL as bind values instead of inlined into the SQL text:
 * MikroORM's execute quotes every value client-side, and a run's end carries its whole text as JSON,
 * so quoting it was about a third of the hub's garbage per delta (bench/heap-summary.ts). For the
 * message path's calls, whose values are strings, numbers, booleans and nulls.
 */
export async function bound<T = any>(em: SqlEm, sql: string, params: Array<string | number | boolean | null | undefined>): Promise<T[]> {
  const knex = em.getConnection().getKnex();
  const values = params.map((v) => v ?? null);
  const trx = em.getTransactionContext();
  // Outside a transaction by node-postgres itself on a pooled connection (db/direct.ts), inside one on its connection.
  if (!trx) return direct<T>(knex, sql, values);
  return ((await knex.raw(sql, values).transacting(trx)) as { rows: T[] }).rows;
}

export async function one<T = any>(em: SqlEm, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await rows<T>(em, sql, params))[0];
}

export function tx<T>(em: Em, fn: (em: Em) => Promise<T>): Promise<T> {
  return em.transactional((t) => fn(t as Em));
}

/** `?, ?, ?` for n placeholders. */
export const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Escapes LIKE wildcards so a keyword matches literally. */
export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

export const ms = (d: unknown): number | undefined => (d == null ? undefined : new Date(d as string).getTime());
