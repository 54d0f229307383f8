// Raw SQL through MikroORM's connection, inside or outside a transaction.
// The session hot paths (accept, claim, batched history) are written in SQL so
// that each is one round trip with the locks it needs.
import type { EntityManager } from '@mikro-orm/postgresql';

export type Em = EntityManager;

export function rows<T = any>(em: Em, sql: string, params: unknown[] = []): Promise<T[]> {
  return em.getConnection().execute<T[]>(sql, params, 'all', em.getTransactionContext());
}

export async function one<T = any>(em: Em, sql: string, params: unknown[] = []): Promise<T | undefined> {
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
