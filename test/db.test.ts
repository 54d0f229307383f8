import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/hub.js';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { once } from 'node:events';
import { openDatabase, clientUrlOf, DB_ACQUIRE_TIMEOUT_MS } from '../src/db/orm.js';
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

test('a libpq-style ?host=/socket/dir URL connects over that Unix socket', async (t) => {
  assert.equal(clientUrlOf('postgresql://u:p@localhost:5432/db?host=/var/run/postgresql&sslmode=disable'), 'postgresql://u:p@%2Fvar%2Frun%2Fpostgresql:5432/db?sslmode=disable');
  assert.equal(clientUrlOf('postgresql://u@127.0.0.1:5432/db'), 'postgresql://u@127.0.0.1:5432/db', 'a TCP URL is left alone');
  const socketDir = '/var/run/postgresql';
  if (!process.env.DATABASE_URL || !existsSync(`${socketDir}/.s.PGSQL.5432`)) return t.skip('needs DATABASE_URL and a local PostgreSQL socket');
  const fresh = await createTestDatabase();
  try {
    const u = new URL(fresh.url!);
    u.searchParams.set('host', socketDir);
    const db = await openDatabase({ databaseUrl: u.toString(), dataDir: ':memory:' }, createLogger('silent'));
    try {
      const [r] = await db.orm.em.fork().getConnection().execute(`select inet_server_addr() as addr`);
      assert.equal(r.addr, null, 'a Unix-socket connection has no server address');
    } finally {
      await db.close();
    }
  } finally {
    await fresh.drop();
  }
});

test('a DATABASE_URL whose server never answers: the start fails naming the address and the wait, not knex\'s "pool is probably full"', async () => {
  // What a firewall that drops packets, a stopped VM or a wrong port on a busy machine looks like: the TCP
  // connection opens (or never completes) and no PostgreSQL greeting comes.
  const held = new Set<net.Socket>();
  const silent = net.createServer((c) => void held.add(c)).listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const err: Error = await openDatabase({ databaseUrl: `postgresql://postgres:hunter2@127.0.0.1:${port}/postgres`, dataDir: ':memory:' }, createLogger('silent')).then(
      () => assert.fail('opened a database on a silent port'),
      (e: Error) => e,
    );
    assert.match(err.message, new RegExp(`no answer from PostgreSQL at 127\\.0\\.0\\.1:${port} within ${DB_ACQUIRE_TIMEOUT_MS / 1000} s`));
    assert.doesNotMatch(err.message, /pool is probably full|transacting/);
    assert.doesNotMatch(err.message, /hunter2/, 'never the password');
  } finally {
    for (const c of held) c.destroy();
    silent.close();
  }
});
