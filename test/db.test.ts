import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/hub.js';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';

test('two nodes starting at once on an empty PostgreSQL database both migrate cleanly', { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL (PostgreSQL); the embedded database has one process' }, async () => {
  const db = await createTestDatabase();
  const log = createLogger('silent');
  try {
    const [a, b] = await Promise.all([0, 1].map(() => openDatabase({ databaseUrl: db.url, dataDir: ':memory:' }, log)));
    const rows = await a.orm.em.fork().getConnection().execute(`select count(*)::int as n from mikro_orm_migrations`);
    const [{ n }] = await b.orm.em.fork().getConnection().execute(`select count(*)::int as n from mikro_orm_migrations where name like '0001%'`);
    assert.ok(rows[0].n > 1);
    assert.equal(n, 1, 'each migration applied once');
    await a.close();
    await b.close();
  } finally {
    await db.drop();
  }
});
