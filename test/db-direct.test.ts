// src/db/direct.ts: the hub's raw SQL outside a transaction goes to
// node-postgres itself, with knex's placeholders (`?`, `\?` for a literal
// one) numbered as knex numbers them, on the same pool, typed the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { positional, direct } from '../src/db/direct.js';
import { startTestHub, type TestHub } from './helpers/hub.js';

test('placeholders are numbered as knex numbers them; an escaped one stays a question mark', () => {
  assert.equal(positional('select ?::int + ?, ?', 3), 'select $1::int + $2, $3');
  assert.equal(positional(`select '{"a":1}'::jsonb \\? 'a', ?`, 1), `select '{"a":1}'::jsonb ? 'a', $1`);
  assert.throws(() => positional('select ?, ?', 1), /expected 1 bindings, saw 2/);
});

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  await t?.close();
});

test('a call answers what knex\'s raw answers; a refused one keeps its SQLSTATE, and its message is not the statement with its values', async () => {
  const knex = t.hub.ctx.orm.em.getConnection().getKnex();
  const sql = `select ?::text as s, ?::int as n, ?::jsonb as j, ?::timestamptz as at, ?::boolean as b, ?::text as nothing`;
  const params = ['x', 42, JSON.stringify({ k: [1] }), new Date('2026-11-27T10:00:00Z'), true, null];
  const viaKnex = ((await knex.raw(sql, params)) as { rows: unknown[] }).rows;
  assert.deepEqual(await direct(knex, sql, params), viaKnex);
  const err = await direct(knex, `select 1 / ?::int`, [0]).catch((e) => e);
  assert.equal(err.code, '22012', 'division by zero');
  // knex's raw prefixes the statement, its values written in, to the message of every error it passes on.
  const bad = await direct(knex, `select ?::int, ?::text`, ['x', 'a user\'s message']).catch((e) => e);
  assert.equal(bad.code, '22P02');
  assert.ok(!String(bad.message).includes('a user'), `the message is PostgreSQL's own: ${bad.message}`);
});
