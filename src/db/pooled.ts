// Raw SQL with bind values, outside any transaction, straight on the shared
// pool: no EntityManager forked for the call, and no client-side quoting
// (MikroORM's `execute` quotes every value into the SQL text). For the host
// channel's batched lookups and writes, whose batches carry hundreds of values
// in a connect storm: a 100-value lookup cost the hub 485 µs of CPU through a
// forked EntityManager's `execute` and 171 µs here (1 value: 56 µs on pg alone).
import type { MikroORM } from '@mikro-orm/postgresql';

export type BindValue = string | number | boolean | Date | null;

export async function pooled<T = Record<string, unknown>>(orm: MikroORM, sql: string, params: BindValue[]): Promise<T[]> {
  return ((await orm.em.getConnection().getKnex().raw(sql, params)) as { rows: T[] }).rows;
}
