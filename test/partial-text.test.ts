// A turn's streamed text kept in joined chunks (src/sessions/partial-text.ts):
// whatever the number of deltas, the text comes back whole and in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartialText } from '../src/sessions/partial-text.js';

test('partial text: 70,000 deltas (past 256 chunks of 256) come back whole, in order, with their byte count', () => {
  const p = new PartialText();
  const parts: string[] = [];
  for (let i = 0; i < 70_000; i++) {
    const s = i % 7 === 0 ? `é${i}` : `${i},`;
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

test('partial text: no string it holds grows with the whole text (a join copies only what came since the last one)', () => {
  // A second level that re-joined every chunk into one string copied the whole text again every
  // 65,536 deltas: tens of milliseconds with a few long turns (bench/RESULTS.md, fifteenth session).
  const p = new PartialText();
  const piece = 'x'.repeat(10);
  for (let i = 0; i < 300_000; i++) p.push(piece, piece.length);
  const held = [...(p as unknown as { chunks: string[] }).chunks, ...(p as unknown as { pieces: string[] }).pieces];
  const longest = Math.max(...held.map((s) => s.length));
  assert.ok(longest <= 256 * piece.length, `the longest string held is ${longest} characters, ${longest / piece.length} pieces`);
  assert.equal(p.text().length, 300_000 * piece.length);
});
