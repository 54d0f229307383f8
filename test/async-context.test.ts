// Node 20's promise hooks are on only while an AsyncLocalStorage run is open
// (src/db/async-context.ts): MikroORM's flushes and transactions used to turn
// them on for every promise of the process for good (2–10 % of the hub's CPU
// per message, a sixth of its allocation). A run's store still follows all of
// its own async work however runs overlap (plain stores: async-context-stores).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionContext } from '@mikro-orm/core';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { eventually } from './helpers/host.js';

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

test("a transaction's context holds while another context of its store settles first; the store is off after both", { skip: !hookBased && 'no hooks to scope' }, async () => {
  const em = t.hub.ctx.em();
  let shortDone = false;
  const long = em.transactional(async (tx) => {
    await sleep(40);
    const seen = [shortDone, TransactionContext.getEntityManager() === tx];
    await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
    return [...seen, TransactionContext.getEntityManager() === tx];
  });
  // Another context of the same store opens and settles meanwhile (no connection: PGlite serves one, which the long one holds).
  await TransactionContext.create(t.hub.ctx.em(), async () => sleep(5));
  shortDone = true;
  assert.equal(enabled(txStore), true, 'the long one is still open');
  assert.deepEqual(await long, [true, true, true]);
  // Off once nothing is open: the hub's own background work may hold a run a moment longer.
  await eventually(async () => !enabled(txStore), 2000, 5);
});
