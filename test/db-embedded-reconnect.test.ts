// The embedded database's socket server (@electric-sql/pglite-socket) accepted one connection at a time
// and refused the next with "Too many connections" until it had processed the last one's close. The hub's
// pool of one replaces a lost connection at once (a statement cut off mid-way, knex disposing of a
// connection after an error), so the new connection could arrive first: refused, node-postgres then waited
// on a half-read answer and the hub's only connection never came back (a CI run hung 180 s on it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.js';

async function connected(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  return c;
}

test('a connection lost mid-statement is replaced at once: the next connection is served, and a transaction it left open is rolled back', { timeout: 30_000 }, async () => {
  const db = await startEmbedded(':memory:').ready;
  try {
    const setup = await connected(db.url);
    await setup.query('create table kept (v text)');
    await setup.end();
    for (let round = 0; round < 20; round++) {
      const lost = await connected(db.url);
      lost.on('error', () => {}); // the cut below is the point
      await lost.query('begin');
      // The statement goes out and its connection is cut at once, as a restart or a network drop does.
      const cut = lost.query('insert into kept values ($1)', [`round ${round}`]).catch(() => undefined);
      (lost as any).connection.stream.destroy();
      await cut;
      const next = await connected(db.url);
      try {
        const { rows } = await next.query('select count(*)::int as n from kept');
        assert.equal(rows[0].n, 0, `round ${round}: the cut transaction's row is not there`);
      } finally {
        await next.end();
      }
    }
  } finally {
    await db.close();
  }
});
