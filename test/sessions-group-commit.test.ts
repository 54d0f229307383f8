// The group commit's order and liveness rules, on its own (the database side of
// a skipped message is in sessions-accept-skip.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit, RETRY } from '../src/sessions/group.js';
import type { Em } from '../src/sessions/sql.js';

interface Item { key: string; name: string }

/** A writer whose first write of `skipName` answers RETRY and whose second write of it blocks until `release()`. */
function lockedWriter(skipName: string) {
  const writes: string[][] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let seen = 0;
  const many = async (_em: Em, items: Item[]) => {
    writes.push(items.map((i) => i.name));
    return Promise.all(items.map(async (i) => {
      if (i.name !== skipName) return i.name;
      if (seen++ === 0) return RETRY;
      await released; // its session's lock, held elsewhere
      return i.name;
    }));
  };
  return { writes, release, many };
}

test('a skipped item is written again alone: batches after it are answered while it waits for its lock', async () => {
  const w = lockedWriter('a1');
  const g = new GroupCommit<Item, string>(() => ({}) as Em, w.many, (i) => i.key, false);
  const done: string[] = [];
  const a1 = g.submit({ key: 'a', name: 'a1' }).then((r) => void done.push(r));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r)); // a1's first batch answered RETRY; its second write now waits
  const b1 = await Promise.race([
    g.submit({ key: 'b', name: 'b1' }),
    new Promise<string>((r) => setTimeout(() => r('blocked'), 1000).unref()),
  ]);
  assert.equal(b1, 'b1', 'b1 is not held up by a1 waiting for its lock');
  const c1 = await g.submit({ key: 'c', name: 'c1' });
  assert.equal(c1, 'c1');
  assert.deepEqual(done, [], 'a1 still waits');
  w.release();
  await a1;
  assert.deepEqual(done, ['a1']);
  assert.ok(w.writes.some((b) => b.length === 1 && b[0] === 'a1'), 'the retried a1 was written by itself');
});

test("a skipped item stays ahead of its key's later items", async () => {
  const w = lockedWriter('a1');
  const g = new GroupCommit<Item, string>(() => ({}) as Em, w.many, (i) => i.key, false);
  const order: string[] = [];
  const a1 = g.submit({ key: 'a', name: 'a1' }).then((r) => void order.push(r));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const a2 = g.submit({ key: 'a', name: 'a2' }).then((r) => void order.push(r));
  const b1 = await g.submit({ key: 'b', name: 'b1' });
  assert.equal(b1, 'b1');
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(order, [], 'a2 waits for a1');
  assert.ok(!w.writes.flat().includes('a2'), 'a2 not written before a1');
  w.release();
  await Promise.all([a1, a2]);
  assert.deepEqual(order, ['a1', 'a2']);
});
