// Brings the schema up to date. Most starts have nothing to apply (a restart,
// a first start from the embedded template, every node but the first): one
// query says so, and MikroORM's migrator — with umzug and its command-line
// parser, about a second of module loading on a small machine — is loaded
// only when a migration is pending.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { allMigrations } from './registry.js';

/** MikroORM's migrations table (its default name; the migrator writes it). */
const TABLE = 'mikro_orm_migrations';

/** The registry's migrations not yet recorded as executed, in order. Every one when the table does not exist yet. */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  const conn = orm.em.getConnection();
  const [{ present }] = await conn.execute<{ present: boolean }[]>(`select to_regclass('${TABLE}') is not null as present`);
  if (!present) return allMigrations.map((m) => m.name);
  const done = new Set((await conn.execute<{ name: string }[]>(`select name from ${TABLE}`)).map((r) => r.name));
  return allMigrations.map((m) => m.name).filter((n) => !done.has(n));
}

/**
 * Applies what is pending; returns the names applied. `exclusive`: several nodes may start at once on
 * one database, so the migrator runs under an advisory lock (PostgreSQL); the embedded database has one.
 */
export async function migrate(orm: MikroORM, exclusive: boolean): Promise<string[]> {
  if (!(await pendingMigrations(orm)).length) return [];
  const { Migrator } = await import('@mikro-orm/migrations');
  const migrationsList: MigrationObject[] = await Promise.all(allMigrations.map(async (m) => ({ name: m.name, class: await m.load() })));
  orm.config.set('migrations', { ...orm.config.get('migrations'), migrationsList });
  const migrator = new Migrator(orm.em);
  if (!exclusive) return (await migrator.up()).map((m) => m.name);
  // Creates the migrations table before taking the lock (it runs on its own connection).
  await migrator.getExecutedMigrations().catch(() => undefined);
  const conn = orm.em.getConnection();
  const applied = await conn.transactional(async (trx) => {
    await conn.execute('select pg_advisory_xact_lock(727001)', [], 'all', trx);
    return migrator.up({ transaction: trx });
  });
  return applied.map((m) => m.name);
}
