// The in-process caches that guard access: an entry is trusted for its TTL only, and once expired it
// leaves memory too, by prune() and a few at every set, not only when its key is looked up again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExpiringMap } from '../src/bus/expiring.js';

/** The map's entry count, expired ones included (what it holds in memory). */
const held = (m: ExpiringMap<string, number>) => m.size;

test('expired entries are answered as absent and pruned oldest first; fresh ones stay', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const m = new ExpiringMap<string, number>(() => 1000, 100);
  for (let i = 0; i < 10; i++) m.set(`a${i}`, i);
  t.mock.timers.tick(600);
  for (let i = 0; i < 5; i++) m.set(`b${i}`, i);
  t.mock.timers.tick(500); // the a's are 1,100 ms old, the b's 500
  assert.equal(m.get('a3'), undefined, 'an expired entry is not trusted');
  assert.equal(m.get('b3'), 3);
  assert.equal(held(m), 14, 'the other expired entries are still held');
  assert.equal(m.prune(), 9, 'prune drops every expired one');
  assert.equal(held(m), 5);
  assert.equal(m.get('b0'), 0);
});

test('a set sheds expired entries as it adds: a storm of keys does not stay once expired', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const m = new ExpiringMap<string, number>(() => 1000, 100_000);
  for (let i = 0; i < 1000; i++) m.set(`storm${i}`, i);
  t.mock.timers.tick(2000);
  for (let i = 0; i < 200; i++) m.set(`later${i}`, i);
  assert.equal(held(m), 800, '200 new entries, 400 expired ones gone with them (two per set at most)');
  m.prune(1);
  assert.equal(held(m), 799, 'prune(max) drops at most max');
  // A re-set key moves to the young end: the sweep stops at the first fresh entry.
  t.mock.timers.tick(500);
  m.set('later0', 7);
  t.mock.timers.tick(600);
  m.prune();
  assert.deepEqual([m.get('later0'), held(m)], [7, 1], 'only the entry refreshed within its TTL is left');
});
