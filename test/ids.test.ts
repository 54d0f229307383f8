// Ids of the rows every message writes are time-ordered (ids.ts, timeOrderedId): a later id sorts
// after an earlier one byte by byte and under a language collation alike, so a primary key on them
// grows at its right edge whatever the database's collation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timeOrderedId } from '../src/ids.js';

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
