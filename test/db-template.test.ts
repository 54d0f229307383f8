// The embedded database's data-directory template (src/db/template.ts): a new
// DATA_DIR is made from it, already migrated; a damaged one falls back to
// initdb with a warning. Embedded PGlite only (it is what the template is for).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/orm.js';
import { startEmbedded } from '../src/db/embedded.js';
import { readTemplate } from '../src/db/template.js';
import { allMigrations } from '../src/db/registry.js';
import { createLogger } from '../src/log.js';

const skip = process.env.DATABASE_URL ? 'embedded PGlite only (the pass without DATABASE_URL runs it)' : false;

function recorder() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger('info', {}, (line) => lines.push(JSON.parse(line))) };
}

test('a new DATA_DIR is made from the template, migrated, and reopens as an existing database with nothing to apply', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-template-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const source = await openDatabase({ dataDir: ':memory:' }, createLogger('silent'));
  const tarball = await source.dumpEmbedded!();
  await source.close();

  const made = await startEmbedded(dir, undefined, () => tarball);
  assert.equal(made.origin, 'template');
  await made.close();

  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: dir }, log);
  try {
    const applied = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(applied?.origin, 'existing');
    assert.equal(applied?.count, 0, 'the template carried every migration');
    const [{ n }] = await db.orm.em.fork().getConnection().execute(`select count(*)::int as n from mikro_orm_migrations`);
    assert.equal(n, allMigrations.length);
    const [{ plans }] = await db.orm.em.fork().getConnection().execute(`select count(*)::int as plans from plans`);
    assert.ok(plans > 0, 'the seeded rows came with it');
  } finally {
    await db.close();
  }
});

test('a damaged template is reported and the database is initialised from scratch instead', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-template-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { lines, log } = recorder();
  const e = await startEmbedded(dir, log, () => new Blob([Buffer.from('not a tarball at all')]));
  try {
    assert.equal(e.origin, 'initdb');
    assert.ok(lines.some((l) => l.level === 'warn' && String(l.msg).includes('template could not be loaded')), JSON.stringify(lines));
  } finally {
    await e.close();
  }
  const db = await openDatabase({ dataDir: dir }, createLogger('silent'));
  try {
    const [{ n }] = await db.orm.em.fork().getConnection().execute(`select count(*)::int as n from mikro_orm_migrations`);
    assert.equal(n, allMigrations.length);
  } finally {
    await db.close();
  }
});

test('an in-memory database (DATA_DIR=:memory:, every test hub) starts from the template too: nothing to apply', { skip }, async () => {
  const source = await openDatabase({ dataDir: ':memory:' }, createLogger('silent'), startEmbedded(':memory:', undefined, () => undefined));
  const tarball = await source.dumpEmbedded!();
  await source.close();

  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: ':memory:' }, log, startEmbedded(':memory:', log, () => tarball));
  try {
    const applied = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(applied?.origin, 'template');
    assert.equal(applied?.count, 0, 'the template carried every migration');
    const [{ plans, users, keys }] = await db.orm.em.fork().getConnection().execute(
      `select (select count(*)::int from plans) as plans, (select count(*)::int from users) as users, (select count(*)::int from api_keys) as keys`);
    assert.ok(plans > 0, 'the seeded rows came with it');
    // Every database made from the template would share an account or a key that came with it.
    assert.deepEqual({ users, keys }, { users: 0, keys: 0 }, 'no account and no API key in the template');
  } finally {
    await db.close();
  }
});

test('an in-memory database with a damaged template is initialised from scratch, with a warning', { skip }, async () => {
  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: ':memory:' }, log, startEmbedded(':memory:', log, () => new Blob([Buffer.from('not a tarball at all')])));
  try {
    assert.ok(lines.some((l) => l.level === 'warn' && String(l.msg).includes('template could not be loaded')), JSON.stringify(lines));
    const applied = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(applied?.origin, 'initdb');
    assert.equal(applied?.count, allMigrations.length);
  } finally {
    await db.close();
  }
});

test('the installed template (npm ci made it) holds no account and no API key', { skip: skip || (!readTemplate() && 'no template installed') }, async () => {
  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: ':memory:' }, log);
  try {
    assert.equal(lines.find((l) => l.msg === 'migrations applied')?.origin, 'template');
    const [{ users, keys }] = await db.orm.em.fork().getConnection().execute(
      `select (select count(*)::int from users) as users, (select count(*)::int from api_keys) as keys`);
    assert.deepEqual({ users, keys }, { users: 0, keys: 0 });
  } finally {
    await db.close();
  }
});
