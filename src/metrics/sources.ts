// What the scrape reads from storage: one cheap query, the pool's counters, a Redis PING — each bounded so a store that hangs cannot hold /metrics.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { keptConnections } from '../db/direct.js';

/** Messages waiting for their host, all nodes (the partial index session_tasks_queued serves it). */
export async function queueDepth(ctx: HubContext): Promise<number> {
  const r = (await within(ctx.em().getConnection().execute(`select count(*)::int as n from session_tasks where status = 'queued'`), 'queue depth')) as Array<{ n: number }>;
  return Number(r[0]?.n ?? 0);
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The knex (tarn) pool behind MikroORM; undefined before it is created. Idle connections kept for the next raw call (db/direct.ts) count as free. */
export function poolOf(orm: MikroORM): { used: number; free: number; pending: number } | undefined {
  const knex = orm.em.getConnection().getKnex();
  const pool = (knex as unknown as { client?: { pool?: TarnPool } }).client?.pool;
  if (!pool) return undefined;
  const kept = keptConnections(knex);
  return { used: pool.numUsed() - kept, free: pool.numFree() + kept, pending: pool.numPendingAcquires() };
}

/** What the scrape waits for a store before giving up on that metric: a database or Redis that does not answer must not hold /metrics. */
const SCRAPE_WAIT_MS = 1000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out`)), SCRAPE_WAIT_MS)))]).finally(() => clearTimeout(timer));
}

/** One round trip in seconds (rejects after SCRAPE_WAIT_MS). */
export async function timedPing(ping: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await within(ping(), 'redis ping');
  return (performance.now() - t0) / 1000;
}
