// Schema migrations at start (src/db/migrate.ts): a database with nothing
// pending is recognised with one query, without loading MikroORM's migrator
// (umzug and its command-line parser cost about a second of every start);
// a fresh one gets every migration. Runs on PostgreSQL (DATABASE_URL) and on
// the embedded database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/orm.js';
import { startEmbedded } from '../src/db/embedded.js';
import { NO_TEMPLATE } from '../src/db/template.js';
import { pendingMigrations } from '../src/db/migrate.js';
import { allMigrations } from '../src/db/registry.js';
import { createLogger } from '../src/log.js';
import { createTestDatabase } from './helpers/hub.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function recorder() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger('info', {}, (line) => lines.push(JSON.parse(line))) };
}

/** Opens the database in a process of its own and says which of the migrator's packages it loaded code from (MikroORM reads every @mikro-orm package.json for a version check). */
function openInChild(env: NodeJS.ProcessEnv): { count: number; loaded: string[] } {
  const script = `
    import { createRequire } from 'node:module';
    const { openDatabase } = await import('./src/db/orm.ts');
    const { createLogger } = await import('./src/log.ts');
    let count = -1;
    const log = createLogger('info', {}, (l) => { const o = JSON.parse(l); if (o.msg === 'migrations applied') count = o.count; });
    const db = await openDatabase({ databaseUrl: process.env.T_DB || undefined, dataDir: process.env.T_DIR }, log);
    await db.close();
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const loaded = ['@mikro-orm/migrations', 'umzug'].filter((p) => cache.some((k) => k.includes('/node_modules/' + p + '/') && k.endsWith('.js')));
    console.log(JSON.stringify({ count, loaded }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

test('a fresh database gets every migration; reopened, nothing is pending and the migrator is not loaded', async (t) => {
  const pg = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'hub-migrate-'));
  t.after(async () => {
    await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const { lines, log } = recorder();
  // The embedded database starts from the template (already migrated) unless given none.
  const db = await openDatabase({ databaseUrl: pg.url, dataDir: pg.url ? dir : ':memory:' }, log, pg.url ? undefined : startEmbedded(':memory:', log, NO_TEMPLATE));
  try {
    const first = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(first?.count, allMigrations.length);
    assert.deepEqual(first?.names, allMigrations.map((m) => m.name));
    assert.deepEqual(await pendingMigrations(db.orm), []);
  } finally {
    await db.close();
  }

  const again = openInChild({ T_DB: pg.url ?? '', T_DIR: dir });
  assert.equal(again.count, 0);
  assert.deepEqual(again.loaded, [], 'nothing pending: the migrator and umzug stay unloaded');
});

test('a database missing its last migration gets just that one, through the migrator', async (t) => {
  const pg = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'hub-migrate-'));
  t.after(async () => {
    await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const db = await openDatabase({ databaseUrl: pg.url, dataDir: dir }, createLogger('silent'));
  const last = allMigrations[allMigrations.length - 1].name;
  try {
    // Forget the last migration (its SQL is idempotent: create or replace function).
    await db.orm.em.getConnection().execute(`delete from mikro_orm_migrations where name = ?`, [last]);
    assert.deepEqual(await pendingMigrations(db.orm), [last]);
  } finally {
    await db.close();
  }
  const again = openInChild({ T_DB: pg.url ?? '', T_DIR: dir });
  assert.equal(again.count, 1);
  assert.ok(again.loaded.includes('@mikro-orm/migrations'));
});
