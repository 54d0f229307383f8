// What the scrape reads from storage: one cheap query and the pool's counters.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';

/** Messages waiting for their host, all nodes (the partial index session_tasks_queued serves it). */
export async function queueDepth(ctx: HubContext): Promise<number> {
  const r = (await ctx.em().getConnection().execute(`select count(*)::int as n from session_tasks where status = 'queued'`)) as Array<{ n: number }>;
  return Number(r[0]?.n ?? 0);
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The knex (tarn) pool behind MikroORM; undefined before it is created. */
export function poolOf(orm: MikroORM): { used: number; free: number; pending: number } | undefined {
  const pool = (orm.em.getConnection().getKnex() as unknown as { client?: { pool?: TarnPool } }).client?.pool;
  if (!pool) return undefined;
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() };
}
