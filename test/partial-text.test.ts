// A turn's streamed text kept as UTF-8 bytes in one buffer (src/sessions/partial-text.ts):
// whatever the number of deltas, the text comes back whole and in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartialText } from '../src/sessions/partial-text.js';

test('partial text: 70,000 deltas, some of two- and four-byte characters, come back whole, in order, with their byte count', () => {
  const p = new PartialText();
  const parts: string[] = [];
  for (let i = 0; i < 70_000; i++) {
    const s = i % 7 === 0 ? `é${i}😀` : `${i},`;
    parts.push(s);
    p.push(s, Buffer.byteLength(s));
  }
  const want = parts.join('');
  assert.equal(p.text(), want);
  assert.equal(p.bytes, Buffer.byteLength(want));
  p.push('tail', 4);
  assert.equal(p.text(), want + 'tail');
});

test('partial text: clear starts over', () => {
  const p = new PartialText();
  for (let i = 0; i < 300; i++) p.push('x', 1);
  p.clear();
  assert.equal(p.text(), '');
  assert.equal(p.bytes, 0);
  p.push('après', 6);
  assert.equal(p.text(), 'après');
});

test('partial text: kept as one buffer of bytes outside the heap, not a string per delta; it doubles no further than its bound', () => {
  // A string per delta outlived two young-generation collections and was promoted: old-generation
  // mark-compacts paused the hub 5–11 ms a few times a phase at 10,000 deltas/s (eighteenth session).
  const p = new PartialText(100_000);
  const piece = 'x'.repeat(10);
  for (let i = 0; i < 9_000; i++) p.push(piece, piece.length);
  const own = Object.values(p as unknown as Record<string, unknown>);
  assert.ok(!own.some((v) => Array.isArray(v)), 'no array of strings');
  const buf = own.find((v) => Buffer.isBuffer(v)) as Buffer;
  assert.ok(buf, 'one buffer holds the text');
  assert.equal(buf.length, 100_000, 'grown to its bound (90,000 bytes), not doubled past it');
  assert.equal(p.text(), piece.repeat(9_000));
  assert.equal(p.bytes, 90_000);
});
