// The raw calls of the message path keep a few pooled connections between calls (src/db/direct.ts):
// the pool's acquire and release cost more of the hub's CPU than the call's own work around the
// statement. Kept connections must never make anyone else wait, never be used once PostgreSQL or
// the network dropped them, and go back before the pool closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';
import { direct, releaseKept } from '../src/db/direct.js';
import { createTestDatabase } from './helpers/hub.js';
import { poolOf } from '../src/metrics/sources.js';
import type { MikroORM } from '@mikro-orm/postgresql';

const pgOnly = process.env.DATABASE_URL ? undefined : 'needs DATABASE_URL: the embedded database serves one connection, which is never kept';

async function withDb(poolSize: number, fn: (knex: any, orm: MikroORM) => Promise<void>) {
  const db = await createTestDatabase();
  const d = await openDatabase({ databaseUrl: db.url, dataDir: ':memory:', dbPoolSize: poolSize }, createLogger('error'));
  try {
    await fn(d.orm.em.getConnection().getKnex(), d.orm);
  } finally {
    await d.close();
    await db.drop();
  }
}

const pidOf = async (knex: any) => (await direct<{ pid: number }>(knex, 'select pg_backend_pid() as pid', []))[0].pid;

test('a call reuses the connection the previous call kept; the pool counts it out, the metrics free', { skip: pgOnly }, async () => {
  await withDb(9, async (knex, orm) => {
    const a = await pidOf(knex);
    const b = await pidOf(knex);
    assert.equal(b, a, 'the same connection, not a fresh acquire');
    assert.equal(knex.client.pool.numUsed(), 1, 'one kept out of the pool');
    const p = poolOf(orm)!;
    assert.equal(p.used, 0, 'idle, as hub_db_pool_connections shows it');
    assert.equal(p.free, knex.client.pool.numFree() + 1);
  });
});

test('whoever asks the pool gets a kept connection at once, even when it is the pool\'s last', { skip: pgOnly }, async () => {
  await withDb(3, async (knex) => {
    const pool = knex.client.pool;
    const held = [await knex.client.acquireConnection(), await knex.client.acquireConnection()];
    await pidOf(knex); // the pool's third connection, kept (a pool of 3 keeps at most one)
    assert.deepEqual([pool.numUsed(), pool.numFree()], [3, 0], 'every connection out, one of them kept');
    let got: unknown;
    const asked = knex.client.acquireConnection().then((c: unknown) => (got = c));
    try {
      // Without the hand-back this waits for the keeper's idle release (a second or more); with it, the
      // pool hands the connection over within a few turns of the event loop.
      for (let i = 0; i < 50 && !got; i++) await new Promise((r) => setImmediate(r));
      assert.ok(got, 'the kept connection was handed over at once');
    } finally {
      for (const c of [...held, await asked]) await knex.client.releaseConnection(c);
    }
  });
});

test('a kept connection PostgreSQL terminated is not used again: the next call gets a live one', { skip: pgOnly }, async () => {
  await withDb(9, async (knex) => {
    const pid = await pidOf(knex);
    // The kept connection (out of the pool by its count), watched for the moment it reads the termination.
    const kept = knex.client.pool.used.map((u: { resource: any }) => u.resource).find((c: any) => c.processID === pid);
    assert.ok(kept, 'the connection that answered is kept');
    const ended = new Promise<void>((r) => kept.once('end', r));
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    await ended; // the client has read the termination (however late this process gets to it)
    const next = await pidOf(knex);
    assert.notEqual(next, pid);
    assert.equal(typeof next, 'number');
  });
});

test("the kept connections go back on request, as the database's close does first (the pool waits for every connection out)", { skip: pgOnly }, async () => {
  await withDb(9, async (knex) => {
    await Promise.all([pidOf(knex), pidOf(knex), pidOf(knex)]);
    assert.ok(knex.client.pool.numUsed() >= 1, 'some kept');
    releaseKept(knex);
    assert.equal(knex.client.pool.numUsed(), 0, 'none out of the pool');
  });
});
