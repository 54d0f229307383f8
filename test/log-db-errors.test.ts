// A database error in a log line keeps its SQLSTATE and PostgreSQL's own
// message, never the statement: MikroORM writes a statement's values into its
// text, and knex puts that text before the message of every error it passes
// on, so a failed write would log the prompt, address or hash it carried.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, errorFields } from '../src/log.js';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  await t?.close();
});

const VALUE = 'a-private-prompt-4b1d';

test('a failed statement logged: its code and PostgreSQL\'s message, not the statement with its values', async () => {
  const conn = t.hub.ctx.orm.em.fork().getConnection();
  const err = await conn.execute(`insert into users (id, name, balance) values (?, ?, ?)`, ['usr_log_db', VALUE, 'not-a-number']).catch((e) => e);
  assert.ok(String(err.message).includes(VALUE), 'the error as MikroORM passes it on carries the value (else this test shows nothing)');
  const lines: string[] = [];
  createLogger('debug', {}, (l) => void lines.push(l)).error('unhandled error', { err });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0].includes(VALUE), `the line carries the value: ${lines[0]}`);
  assert.ok(!lines[0].includes('insert into'), 'nor the statement');
  const logged = JSON.parse(lines[0]).err;
  assert.equal(logged.code, '22P02');
  assert.match(logged.message, /invalid input syntax for type bigint/);
  assert.match(logged.stack, /^\s+at /, 'the stack keeps its frames, without the message');
});

test("a value shaped like MikroORM's appended detail does not make the line keep the statement before it", async () => {
  const conn = t.hub.ctx.orm.em.fork().getConnection();
  const err = await conn.execute(`insert into users (id, name, balance) values (?, ?, ?)`, ['usr_log_db2', `${VALUE}\n - detail: x`, 'not-a-number']).catch((e) => e);
  const f = errorFields(err);
  assert.ok(!JSON.stringify(f).includes(VALUE), JSON.stringify(f));
  assert.equal(f.code, '22P02');
  assert.match(String(f.message), /^invalid input syntax for type bigint/);
});

test('an error inside a transaction, and one wrapped by MikroORM, are logged the same way', async () => {
  const em = t.hub.ctx.orm.em.fork();
  const inTx = await em.transactional((tx) => tx.getConnection().execute(`select ?::int`, [VALUE], 'all', tx.getTransactionContext())).catch((e) => e);
  const f = errorFields(inTx);
  assert.equal(f.code, '22P02');
  // PostgreSQL's own message quotes the value it could not read: that value goes too.
  assert.equal(f.message, 'invalid input syntax for type integer: "[value]"');
  assert.ok(!JSON.stringify(f).includes(VALUE), JSON.stringify(f));
  // A value that PostgreSQL echoes unterminated or huge goes too, in one pass, and the message stays bounded.
  const big = Object.assign(new Error(`invalid input syntax for type json: "${': "x'.repeat(200_000)}`), { code: '22P02' });
  const b = errorFields(big);
  assert.equal(b.message, 'invalid input syntax for type json: "[value]"');
  const long = errorFields(Object.assign(new Error('y'.repeat(50_000)), { code: 'XX000' }));
  assert.equal((long.message as string).length, 1000);
  // MikroORM's own exception (a unique violation on flush): it appends PostgreSQL's `detail`, which
  // quotes the key's value, after the message ("\n - detail: Key (id)=(…) already exists.").
  const user = { id: `usr_${VALUE}`, name: 'log test', balance: 0 };
  const first = t.hub.ctx.orm.em.fork();
  await first.persistAndFlush(first.create('User', user));
  const again = t.hub.ctx.orm.em.fork();
  const dup = await again.persistAndFlush(again.create('User', user)).catch((e) => e);
  assert.ok(String(dup.message).includes(`detail: Key (id)=(usr_${VALUE})`), 'MikroORM appends the detail (else this shows nothing)');
  const d = errorFields(dup);
  assert.deepEqual({ code: d.code, constraint: d.constraint, table: d.table, message: d.message },
    { code: '23505', constraint: 'users_pkey', table: 'users', message: 'duplicate key value violates unique constraint "users_pkey"' });
  assert.ok(!JSON.stringify(d).includes(VALUE), JSON.stringify(d));
  // The same shape built by hand, as knex alone writes it (no detail appended).
  const wrapped = Object.assign(new Error(`insert into "users" ("id", "name") values ('usr_x', '${VALUE}') - duplicate key value violates unique constraint "users_pkey"`), {
    name: 'UniqueConstraintViolationException', code: '23505', constraint: 'users_pkey', table: 'users', detail: `Key (name)=(${VALUE}) already exists.`,
  });
  const w = errorFields(wrapped);
  assert.deepEqual({ code: w.code, constraint: w.constraint, table: w.table, message: w.message },
    { code: '23505', constraint: 'users_pkey', table: 'users', message: 'duplicate key value violates unique constraint "users_pkey"' });
  assert.ok(!JSON.stringify(w).includes(VALUE), JSON.stringify(w));
});

test('other errors are logged whole', () => {
  const e = new Error('the host closed its channel');
  assert.deepEqual(errorFields(e), { name: 'Error', message: 'the host closed its channel', stack: e.stack });
  // A `code` that is not a SQLSTATE (Node's own) is not a database error.
  const n = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  assert.equal(errorFields(n).message, 'connect ECONNREFUSED 127.0.0.1:5432');
  const p = Object.assign(new Error('write EPIPE - the reader went: "x"'), { code: 'EPIPE' });
  assert.deepEqual(errorFields(p), { name: 'Error', message: 'write EPIPE - the reader went: "x"', stack: p.stack });
});
