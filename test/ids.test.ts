// Ids of the rows every message writes are time-ordered (ids.ts, timeOrderedId): a later id sorts
// after an earlier one byte by byte and under a language collation alike, so a primary key on them
// grows at its right edge whatever the database's collation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomId, timeOrderedId } from '../src/ids.js';

test('time-ordered ids: later sorts after earlier (bytes and collation), random within a millisecond, [0-9a-z] after the prefix', () => {
  const t0 = Date.UTC(2026, 10, 25);
  const times = [0, 1, 35, 36, 999, 60_000, 86_400_000, 365 * 86_400_000].map((d) => t0 + d);
  const ids = times.map((t) => timeOrderedId('msg', t));
  const collator = new Intl.Collator('en');
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} < ${ids[i]} as bytes`);
    assert.ok(collator.compare(ids[i - 1], ids[i]) < 0, `${ids[i - 1]} < ${ids[i]} under the en collation`);
  }
  for (const id of ids) assert.match(id, /^msg_[0-9a-z]{21}$/);
  assert.equal(timeOrderedId('run', 0).slice(0, 13), 'run_000000000');
  const same = new Set(Array.from({ length: 10_000 }, () => timeOrderedId('run', t0)));
  assert.equal(same.size, 10_000, 'ids of one millisecond differ by their random part');
});

test('random ids: each character uniform over its alphabet across many pool refills, any length, no two alike', () => {
  // 20,000 ids of 16 base62 characters draw about 330,000 bytes: the 4 KiB pool is refilled ~80 times.
  const ids = Array.from({ length: 20_000 }, () => randomId());
  assert.equal(new Set(ids).size, ids.length);
  const counts = new Map<string, number>();
  for (const id of ids) {
    assert.match(id, /^[0-9a-zA-Z]{16}$/);
    for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  assert.equal(counts.size, 62, 'every character of the alphabet appears');
  // Chi-square with 61 degrees of freedom: above 120 happens by chance about once in 10^6 runs; a bias
  // (a byte reused, bytes past the last whole multiple of 62 kept) gives thousands.
  const expected = (ids.length * 16) / 62;
  const chi2 = [...counts.values()].reduce((s, n) => s + (n - expected) ** 2 / expected, 0);
  assert.ok(chi2 < 120, `chi-square ${chi2.toFixed(1)}`);
  // Base 36 (the random part of time-ordered ids) likewise.
  const b36 = new Map<string, number>();
  for (let i = 0; i < 20_000; i++) for (const c of timeOrderedId('run').slice(13)) b36.set(c, (b36.get(c) ?? 0) + 1);
  assert.equal(b36.size, 36);
  const e36 = (20_000 * 12) / 36;
  assert.ok([...b36.values()].reduce((s, n) => s + (n - e36) ** 2 / e36, 0) < 90);
  // Longer than one pass of the character buffer.
  assert.match(randomId(150), /^[0-9a-zA-Z]{150}$/);
  assert.notEqual(randomId(150), randomId(150));
});
