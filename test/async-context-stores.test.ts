// AsyncLocalStorage scoped to its open runs (src/db/async-context.ts), on plain
// stores in a process with no hub (nothing else opens a run here): a run's store
// follows its own async work however runs of several stores nest and overlap,
// the stores go off once the last run has settled (a sync one when it returns,
// one that throws or rejects too), and a store entered with enterWith stays on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { scopeAsyncContexts } from '../src/db/async-context.js';

const enabled = (s: AsyncLocalStorage<unknown>) => (s as unknown as { enabled: boolean }).enabled;
/** Node 24's AsyncLocalStorage needs no hooks: nothing to scope there. */
const hookBased = typeof (AsyncLocalStorage.prototype as unknown as { _enable?: unknown })._enable === 'function';

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
  const seen = await new Promise<[string | undefined, boolean]>((res) => setImmediate(() => {
    pinned.enterWith('kept');
    void other.run('o', async () => sleep(1)).then(async () => {
      await sleep(1);
      res([pinned.getStore(), enabled(pinned)]);
    });
  }));
  assert.deepEqual(seen, ['kept', true]);
  assert.equal(enabled(other), false);
  pinned.disable();
});
