// Node 20's promise hooks are on only while an AsyncLocalStorage run is open
// (src/db/async-context.ts): MikroORM's flushes and transactions used to turn
// them on for every promise of the process for good, a tenth of the hub's CPU
// per message. A run's store still follows all of its own async work, however
// runs overlap, and a store entered with enterWith is left on.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionContext } from '@mikro-orm/core';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { scopeAsyncContexts } from '../src/db/async-context.js';

const enabled = (s: AsyncLocalStorage<unknown>) => (s as unknown as { enabled: boolean }).enabled;
/** MikroORM's transaction store (private in its types). */
const txStore = (TransactionContext as unknown as { storage: AsyncLocalStorage<unknown> }).storage;
/** Node 24's AsyncLocalStorage needs no hooks: nothing to scope there. */
const hookBased = typeof (AsyncLocalStorage.prototype as unknown as { _enable?: unknown })._enable === 'function';
const FIXTURE = resolve(import.meta.dirname, 'fixtures/orm-promise-hooks.ts');

test('a hub with MikroORM: promise hooks on inside a transaction, off once it and a flush have settled', { skip: !hookBased && 'no hooks to scope' }, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE], { encoding: 'utf8', timeout: 60_000, env: process.env });
  const line = r.stdout.split('\n').find((l) => l.startsWith('REPORT '));
  assert.ok(line, `no report: ${r.stderr.slice(-2000)}`);
  assert.deepEqual(JSON.parse(line.slice(7)), {
    before: false,
    started: false,
    inTransaction: { hooks: true, context: true },
    afterTransaction: false,
    afterFlush: false,
  });
});

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test("a transaction's context holds while another one settles first; MikroORM's store is off after both", { skip: !hookBased && 'no hooks to scope' }, async () => {
  const em = t.hub.ctx.em();
  let shortDone = false;
  const long = em.transactional(async (tx) => {
    await sleep(40);
    const seen = [shortDone, TransactionContext.getEntityManager() === tx];
    await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
    return [...seen, TransactionContext.getEntityManager() === tx];
  });
  await em.transactional(async () => sleep(5));
  shortDone = true;
  assert.equal(enabled(txStore), true, 'the long one is still open');
  assert.deepEqual(await long, [true, true, true]);
  await sleep(1);
  assert.equal(enabled(txStore), false);
});

test('stores are scoped exactly where AsyncLocalStorage is hook-based', () => {
  assert.equal(scopeAsyncContexts(), hookBased);
});

test('nested and overlapping runs of two stores keep their stores; a sync run ends when it returns; errors settle too', { skip: !hookBased && 'no hooks to scope' }, async () => {
  scopeAsyncContexts();
  const a = new AsyncLocalStorage<string>();
  const b = new AsyncLocalStorage<string>();
  const slow = a.run('a', async () => {
    await sleep(30);
    const nested = await b.run('b', async () => {
      await sleep(5);
      return [a.getStore(), b.getStore()];
    });
    await sleep(5);
    return [...nested, a.getStore(), b.getStore()];
  });
  const quick = await b.run('b0', async () => {
    await sleep(1);
    return b.getStore();
  });
  assert.equal(quick, 'b0');
  assert.equal(enabled(a), true, 'a is still open');
  assert.deepEqual(await slow, ['a', 'b', 'a', undefined]);
  await sleep(1);
  assert.equal(enabled(a), false);
  assert.equal(enabled(b), false);

  // A callback that returns no promise ends with its return, one that throws or rejects settles too.
  assert.equal(a.run('sync', () => a.getStore()), 'sync');
  assert.equal(enabled(a), false);
  assert.throws(() => a.run('x', () => { throw new Error('boom'); }), /boom/);
  await assert.rejects(a.run('y', async () => { await sleep(1); throw new Error('late'); }), /late/);
  await sleep(1);
  assert.equal(enabled(a), false);
});

test('a store entered with enterWith stays on', { skip: !hookBased && 'no hooks to scope' }, async () => {
  scopeAsyncContexts();
  const pinned = new AsyncLocalStorage<string>();
  const other = new AsyncLocalStorage<string>();
  await new Promise<void>((res) => setImmediate(() => {
    pinned.enterWith('kept');
    void other.run('o', async () => sleep(1)).then(async () => {
      await sleep(1);
      assert.equal(pinned.getStore(), 'kept');
      assert.equal(enabled(pinned), true);
      res();
    });
  }));
  assert.equal(enabled(other), false);
  pinned.disable();
});
