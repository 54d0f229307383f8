// The embedded database's data-directory template (src/db/template.ts): a new
// DATA_DIR copies its directory, already migrated (the tarball when there is no
// directory); an in-memory database loads its tarball; a damaged one falls back
// to initdb with a warning. Embedded PGlite only (it is what the template is for).
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/orm.js';
import { startEmbedded } from '../src/db/embedded.js';
import { INSTALLED_TEMPLATE, NO_TEMPLATE, type TemplateSource } from '../src/db/template.js';
import { allMigrations } from '../src/db/registry.js';
import { createLogger } from '../src/log.js';

const skip = process.env.DATABASE_URL ? 'embedded PGlite only (the pass without DATABASE_URL runs it)' : false;

function recorder() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger('info', {}, (line) => lines.push(JSON.parse(line))) };
}

const scratch = mkdtempSync(join(tmpdir(), 'hub-template-'));
/** A template made the way the build makes it: a migrated database on disk (its `pg` folder), from initdb. */
const sourceDir = join(scratch, 'source');
let sourceTarball: Blob;
before(async () => {
  if (skip) return;
  const source = await openDatabase({ dataDir: sourceDir }, createLogger('silent'), startEmbedded(sourceDir, undefined, NO_TEMPLATE));
  sourceTarball = await source.dumpEmbedded!();
  await source.close();
});
after(() => rmSync(scratch, { recursive: true, force: true }));

function newDataDir(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  return dir;
}

/** Opens `dir` as the hub would on a restart: an existing, fully migrated database with the seeded rows. */
async function assertMigratedExisting(dir: string): Promise<void> {
  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: dir }, log);
  try {
    const applied = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(applied?.origin, 'existing');
    assert.equal(applied?.count, 0, 'the template carried every migration');
    const [{ n, plans }] = await db.orm.em.fork().getConnection().execute(
      `select (select count(*)::int from mikro_orm_migrations) as n, (select count(*)::int from plans) as plans`);
    assert.equal(n, allMigrations.length);
    assert.ok(plans > 0, 'the seeded rows came with it');
  } finally {
    await db.close();
  }
}

test('a new DATA_DIR copies the template directory (its tarball is not read), and reopens as an existing database with nothing to apply', { skip }, async () => {
  const dir = newDataDir('from-directory');
  const template: TemplateSource = {
    dir: () => join(sourceDir, 'pg'),
    tarball: () => assert.fail('the tarball is read only when there is no directory'),
  };
  const made = await startEmbedded(dir, undefined, template).ready;
  assert.equal(made.origin, 'template');
  await made.close();
  assert.deepEqual(readdirSync(dir), ['pg'], 'the copy was renamed into place; no staging folder is left');
  assert.equal(statSync(join(dir, 'pg')).mode & 0o777, 0o700);
  await assertMigratedExisting(dir);
  assert.ok(existsSync(join(sourceDir, 'pg', 'PG_VERSION')), 'the template was copied, not moved');
});

test('without a template directory (a template made before it had one), a new DATA_DIR loads the tarball', { skip }, async () => {
  const dir = newDataDir('from-tarball');
  const made = await startEmbedded(dir, undefined, { dir: () => undefined, tarball: () => sourceTarball }).ready;
  assert.equal(made.origin, 'template');
  await made.close();
  await assertMigratedExisting(dir);
});

for (const [what, make] of [
  ['a template directory without a database', (d: string) => mkdirSync(d)],
  ['a damaged template directory', (d: string) => (mkdirSync(d), writeFileSync(join(d, 'PG_VERSION'), '17\n'))],
] as const) {
  test(`${what} is reported and the database is initialised from scratch instead`, { skip }, async () => {
    const bad = join(scratch, `bad-${what.length}`);
    make(bad);
    const dir = newDataDir(`from-bad-${what.length}`);
    const { lines, log } = recorder();
    const e = await startEmbedded(dir, log, { dir: () => bad, tarball: () => undefined }).ready;
    try {
      assert.equal(e.origin, 'initdb');
      assert.ok(lines.some((l) => l.level === 'warn' && String(l.msg).includes('template could not be loaded')), JSON.stringify(lines));
      assert.deepEqual(readdirSync(dir).sort(), ['pg', 'run'], 'no staging folder is left (run: the socket of the database, open)');
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
}

test('a damaged tarball is reported and the database is initialised from scratch instead', { skip }, async () => {
  const dir = newDataDir('from-bad-tarball');
  const { lines, log } = recorder();
  const e = await startEmbedded(dir, log, { dir: () => undefined, tarball: () => new Blob([Buffer.from('not a tarball at all')]) }).ready;
  try {
    assert.equal(e.origin, 'initdb');
    assert.ok(lines.some((l) => l.level === 'warn' && String(l.msg).includes('template could not be loaded')), JSON.stringify(lines));
  } finally {
    await e.close();
  }
});

test('an in-memory database (DATA_DIR=:memory:, every test hub) starts from the tarball: nothing to apply', { skip }, async () => {
  const { lines, log } = recorder();
  const db = await openDatabase({ dataDir: ':memory:' }, log, startEmbedded(':memory:', log, { dir: () => assert.fail('an in-memory database cannot copy a directory'), tarball: () => sourceTarball }));
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
  const db = await openDatabase({ dataDir: ':memory:' }, log, startEmbedded(':memory:', log, { dir: () => undefined, tarball: () => new Blob([Buffer.from('not a tarball at all')]) }));
  try {
    assert.ok(lines.some((l) => l.level === 'warn' && String(l.msg).includes('template could not be loaded')), JSON.stringify(lines));
    const applied = lines.find((l) => l.msg === 'migrations applied');
    assert.equal(applied?.origin, 'initdb');
    assert.equal(applied?.count, allMigrations.length);
  } finally {
    await db.close();
  }
});

const installed = !skip && INSTALLED_TEMPLATE.dir() && INSTALLED_TEMPLATE.tarball() ? false : 'no template installed';
test('the installed template (npm ci made it, both forms) holds no account and no API key', { skip: skip || installed }, async () => {
  const dir = newDataDir('installed');
  for (const dataDir of [':memory:', dir]) {
    const { lines, log } = recorder();
    const db = await openDatabase({ dataDir }, log);
    try {
      assert.equal(lines.find((l) => l.msg === 'migrations applied')?.origin, 'template', dataDir);
      const [{ users, keys }] = await db.orm.em.fork().getConnection().execute(
        `select (select count(*)::int from users) as users, (select count(*)::int from api_keys) as keys`);
      assert.deepEqual({ users, keys }, { users: 0, keys: 0 }, dataDir);
    } finally {
      await db.close();
    }
  }
});

test('the installed tarball is handed to PGlite already unpacked (Node\'s zlib, not PGlite\'s slower DecompressionStream)', { skip: skip || installed }, async () => {
  const bytes = new Uint8Array(await INSTALLED_TEMPLATE.tarball()!.arrayBuffer());
  assert.notDeepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], 'not gzip');
  assert.equal(Buffer.from(bytes.subarray(257, 262)).toString('latin1'), 'ustar', 'a tar archive');
});

test('the installed tarball answers arrayBuffer() with the bytes it holds (no chunked read of 40 MB), and is a whole Blob besides', { skip: skip || installed }, async () => {
  const blob = INSTALLED_TEMPLATE.tarball()!;
  const [a, b] = [await blob.arrayBuffer(), await blob.arrayBuffer()];
  assert.ok(a === b, 'the same buffer: held, not read again');
  assert.equal(blob.size, a.byteLength);
  const head = new Uint8Array(await new Response(blob.slice(0, 512)).arrayBuffer());
  assert.ok(Buffer.from(head).equals(new Uint8Array(a, 0, 512)), 'its stream carries the same bytes');
});
