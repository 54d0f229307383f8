// The group commit's order and liveness rules, on its own (the database side of
// a skipped message is in sessions-accept-skip.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit, RETRY } from '../src/sessions/group.js';
import type { SqlEm } from '../src/sessions/sql.js';

interface Item { key: string; name: string }

/**
 * A writer for which `skipName`'s session is locked elsewhere until `release()`: in a batch it
 * is answered RETRY (skipped, or its bounded wait ran out); written alone it waits for the lock.
 */
function lockedWriter(skipName: string) {
  const writes: Array<{ names: string[]; alone: boolean }> = [];
  let release!: () => void;
  let held = true;
  const released = new Promise<void>((r) => (release = () => { held = false; r(); }));
  const many = async (_em: SqlEm, items: Item[], alone: boolean) => {
    writes.push({ names: items.map((i) => i.name), alone });
    return Promise.all(items.map(async (i) => {
      if (i.name !== skipName || !held) return i.name;
      if (!alone) return RETRY;
      await released;
      return i.name;
    }));
  };
  return { writes, release, many };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

test('a skipped item goes in the next batch, ahead of what came since; the lock released meanwhile, it is written there', async () => {
  const writes: Array<{ names: string[]; alone: boolean }> = [];
  let skipped = false;
  const many = async (_em: SqlEm, items: Item[], alone: boolean) => {
    writes.push({ names: items.map((i) => i.name), alone });
    return items.map((i) => (i.name === 'a1' && !skipped ? ((skipped = true), RETRY) : i.name)); // a run's end held it, for one statement
  };
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key);
  const a1 = g.submit({ key: 'a', name: 'a1' });
  await new Promise((r) => setImmediate(r));
  const b1 = g.submit({ key: 'b', name: 'b1' });
  assert.deepEqual(await Promise.all([a1, b1]), ['a1', 'b1']);
  assert.deepEqual(writes, [{ names: ['a1'], alone: false }, { names: ['a1', 'b1'], alone: false }]);
});

test('an item skipped twice is written alone: batches after it are answered while it waits for its lock', async () => {
  const w = lockedWriter('a1');
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, w.many, (i) => i.key);
  const done: string[] = [];
  const a1 = g.submit({ key: 'a', name: 'a1' }).then((r) => void done.push(r));
  await turns(4); // skipped in its batch, then in the next; now written alone, waiting for the lock
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
  assert.deepEqual(w.writes.filter((b) => b.alone), [{ names: ['a1'], alone: true }], 'only a1, by itself');
});

test("an item skipped twice stays ahead of its key's later items", async () => {
  const w = lockedWriter('a1');
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, w.many, (i) => i.key);
  const order: string[] = [];
  const a1 = g.submit({ key: 'a', name: 'a1' }).then((r) => void order.push(r));
  await turns(4);
  const a2 = g.submit({ key: 'a', name: 'a2' }).then((r) => void order.push(r));
  const b1 = await g.submit({ key: 'b', name: 'b1' });
  assert.equal(b1, 'b1');
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(order, [], 'a2 waits for a1');
  assert.ok(!w.writes.some((b) => b.names.includes('a2')), 'a2 not written before a1');
  w.release();
  await Promise.all([a1, a2]);
  assert.deepEqual(order, ['a1', 'a2']);
});

test('items skipped twice are written one at a time: an outside lock on many sessions pins one connection, not the pool', async () => {
  let release!: () => void;
  let held = true;
  const released = new Promise<void>((r) => (release = () => { held = false; r(); }));
  let aloneNow = 0;
  let aloneMax = 0;
  const locked = new Set(['a1', 'c1', 'd1']);
  const many = async (_em: SqlEm, items: Item[], alone: boolean) => {
    if (alone) aloneMax = Math.max(aloneMax, ++aloneNow);
    try {
      return await Promise.all(items.map(async (i) => {
        if (!locked.has(i.name) || !held) return i.name;
        if (!alone) return RETRY;
        await released;
        return i.name;
      }));
    } finally {
      if (alone) aloneNow--;
    }
  };
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key);
  const done: string[] = [];
  const waiting = ['a1', 'c1', 'd1'].map((n) => g.submit({ key: n[0], name: n }).then((r) => void done.push(r)));
  await turns(6);
  assert.equal(await g.submit({ key: 'b', name: 'b1' }), 'b1', 'batches go on meanwhile');
  assert.equal(aloneMax, 1, 'one lane');
  release();
  await Promise.all(waiting);
  assert.deepEqual(done, ['a1', 'c1', 'd1'], 'in the order they were skipped');
  assert.equal(aloneMax, 1);
});

test('with several batches in flight, each new batch is written while the others are, up to the bound; a key is in one batch at a time', async () => {
  const writes: string[][] = [];
  const gates: Array<() => void> = [];
  let inflight = 0;
  let most = 0;
  const many = async (_em: SqlEm, items: Item[]) => {
    writes.push(items.map((i) => i.name));
    most = Math.max(most, ++inflight);
    await new Promise<void>((r) => gates.push(r));
    inflight--;
    return items.map((i) => i.name);
  };
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key, { maxInflight: 3 });
  const out: Array<Promise<string>> = [];
  for (const [key, name] of [['a', 'a1'], ['b', 'b1'], ['c', 'c1'], ['d', 'd1'], ['a', 'a2']]) {
    out.push(g.submit({ key, name }));
    await turns(2);
  }
  assert.deepEqual(writes, [['a1'], ['b1'], ['c1']], 'three batches at once; d1 and a2 wait');
  gates.shift()!(); // a1's batch ends: d1 and a2 go in the next one (a's earlier item is done)
  await turns(4);
  assert.deepEqual(writes.slice(3), [['d1', 'a2']]);
  assert.equal(most, 3);
  while (gates.length) gates.shift()!();
  await turns(4);
  while (gates.length) gates.shift()!();
  assert.deepEqual(await Promise.all(out), ['a1', 'b1', 'c1', 'd1', 'a2']);
});

/** The group's answer, or a failure naming what did not happen within 10 s (a group that lingers when it must not). */
function promptly<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still waiting after 10 s`)), 10_000)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

test('with a linger, items arriving within it share one batch; hurry() writes the lingering batch at once; a full batch does not wait', async () => {
  const writes: Array<{ names: string[]; at: number }> = [];
  const many = async (_em: SqlEm, items: Item[]) => {
    writes.push({ names: items.map((i) => i.name), at: performance.now() });
    return items.map((i) => i.name);
  };
  // What a linger gathers, and what goes without it, on a linger of an hour: no stall of this machine
  // ends it, so nothing is written unless the group writes without lingering.
  const HOUR = 3_600_000;
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key, { maxInflight: 3, lingerMs: HOUR });

  // Three items over a few turns inside the linger: one batch, nothing written meanwhile.
  const first = [g.submit({ key: 'a', name: 'a1' })];
  await turns(3);
  first.push(g.submit({ key: 'b', name: 'b1' }));
  await new Promise((r) => setTimeout(r, 5));
  first.push(g.submit({ key: 'c', name: 'c1' }));
  await turns(3);
  assert.equal(writes.length, 0, 'nothing written inside the linger');

  // hurry(): the lingering batch goes now, not after the linger.
  g.hurry();
  assert.deepEqual(await promptly(Promise.all(first), 'hurry()'), ['a1', 'b1', 'c1']);
  assert.deepEqual(writes.map((w) => w.names), [['a1', 'b1', 'c1']]);

  // A full batch (64 items) is written without lingering.
  const full = Array.from({ length: 64 }, (_, i) => g.submit({ key: `k${i}`, name: `n${i}` }));
  await promptly(Promise.all(full), 'a full batch');
  assert.equal(writes[1].names.length, 64);
  g.hurry(); // nothing lingering: a no-op

  // The linger's own timer: a lone item is written once the linger has passed, not before.
  const LINGER = 300;
  const short = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key, { maxInflight: 3, lingerMs: LINGER });
  const t0 = performance.now();
  assert.equal(await short.submit({ key: 'a', name: 'a3' }), 'a3');
  assert.deepEqual(writes[2].names, ['a3']);
  assert.ok(writes[2].at - t0 >= LINGER - 1, `written after the linger (${(writes[2].at - t0).toFixed(1)} ms)`);
});

test('a batch is bounded in bytes as well as in count: large items arriving together are split, one too large goes alone', async () => {
  const writes: Array<{ names: string[] }> = [];
  const many = async (_em: SqlEm, items: Array<Item & { size: number }>) => {
    writes.push({ names: items.map((i) => i.name) });
    return items.map((i) => i.name);
  };
  // An hour's linger: a batch over the byte bound is written without it, or this waits and fails.
  const g = new GroupCommit<Item & { size: number }, string>(() => ({}) as SqlEm, many, (i) => i.key, { maxInflight: 1, lingerMs: 3_600_000, budget: { sizeOf: (i) => i.size, maxBytes: 1000 } });
  const names = await promptly(Promise.all([
    g.submit({ key: 'a', name: 'a', size: 400 }),
    g.submit({ key: 'b', name: 'b', size: 400 }),
    g.submit({ key: 'c', name: 'c', size: 400 }), // over the 1000 bytes with a and b: the next batch
    g.submit({ key: 'd', name: 'd', size: 5000 }), // alone: larger than the bound on its own
    g.submit({ key: 'e', name: 'e', size: 10 }), // another key, small enough for the first batch
  ]), 'items over the byte bound');
  assert.deepEqual(names, ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(writes.map((w) => w.names), [['a', 'b', 'e'], ['c'], ['d']]);
});

test('each item answered is observed once: its wait (a batch in flight, a call that skipped it) and the call that wrote it', async () => {
  // Bounded by instants taken around what the group does, not by durations: a loaded CI machine stalls anywhere.
  const seen: Array<{ wait: number; write: number }> = [];
  let skipped = false;
  const gates: Array<() => void> = [];
  const calls: number[] = []; // when each call began
  const opened: number[] = []; // when each call's gate was opened
  const many = async (_em: SqlEm, items: Item[]) => {
    calls.push(performance.now());
    await new Promise<void>((r) => gates.push(r));
    return items.map((i) => (i.name === 'b1' && !skipped ? ((skipped = true), RETRY) : i.name));
  };
  const g = new GroupCommit<Item, string>(() => ({}) as SqlEm, many, (i) => i.key, { observe: (wait, write) => seen.push({ wait, write }) });
  const beforeA = performance.now();
  const a1 = g.submit({ key: 'a', name: 'a1' });
  await turns(2);
  const b1 = g.submit({ key: 'b', name: 'b1' }); // waits for a1's call, then is skipped once
  const afterB = performance.now();
  const open = async (ms: number) => {
    await new Promise((r) => setTimeout(r, ms));
    opened.push(performance.now());
    gates.shift()!();
    await turns(4);
  };
  await open(30); // a1's call
  await open(30); // b1 skipped
  await open(30); // b1 written
  assert.deepEqual(await Promise.all([a1, b1]), ['a1', 'b1']);
  const end = performance.now();
  assert.equal(calls.length, 3);
  assert.equal(seen.length, 2, 'one observation per item answered, none for the skip');
  const [a, b] = seen;
  const s = (ms: number) => ms / 1000;
  assert.ok(a.wait >= 0 && a.wait <= s(calls[0] - beforeA), `a1 waited only until its call began: ${JSON.stringify(a)}`);
  assert.ok(a.write >= s(opened[0] - calls[0]) && a.write <= s(end - calls[0]), `a1's write is its call: ${JSON.stringify(a)}`);
  assert.ok(b.wait >= s(opened[1] - afterB), `b1 waited through a1's call and the call that skipped it: ${JSON.stringify(b)}`);
  assert.ok(b.write >= s(opened[2] - calls[2]) && b.write <= s(end - calls[2]), `b1's write is the call that wrote it, not the one that skipped it: ${JSON.stringify(b)}`);
});
