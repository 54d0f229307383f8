// Raw SQL with bind values, outside any transaction, straight on the shared
// pool: no EntityManager forked for the call, and no client-side quoting
// (MikroORM's `execute` quotes every value into the SQL text). For the host
// channel's batched lookups and writes, whose batches carry hundreds of values
// in a connect storm: a 100-value lookup cost the hub 485 µs of CPU through a
// forked EntityManager's `execute` and 171 µs through knex's raw; it now goes
// by node-postgres itself (direct.ts).
import type { MikroORM } from '@mikro-orm/postgresql';
import { direct } from './direct.js';

type Scalar = string | number | boolean | Date | null;
/** A value, or an array of them (a PostgreSQL array: `unnest(?::text[])`, `= any(?::text[])`). */
export type BindValue = Scalar | readonly Scalar[];

export function pooled<T = Record<string, unknown>>(orm: MikroORM, sql: string, params: BindValue[]): Promise<T[]> {
  return direct<T>(orm.em.getConnection().getKnex(), sql, params);
}
