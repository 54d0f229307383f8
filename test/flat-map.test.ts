// The decoder's fast path for maps of strings (host-protocol/flat-map.ts) must answer exactly
// as the library does, or not at all: every frame it reads is compared with the library's
// reading, over generated frames and over those frames damaged byte by byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Encoder, Decoder } from '@msgpack/msgpack';
import { decodeFlatStringMap } from '../host-protocol/flat-map.js';
import { nativeStringDecoder } from '../host-protocol/native-strings.js';
import { decodeHostFrame, encodeFrame } from '../host-protocol/codec.js';

const MAX = 300;
const library = nativeStringDecoder({ maxStrLength: MAX, maxArrayLength: 10_000, maxMapLength: 1_000, maxBinLength: 1_000_000, maxExtLength: 0 });

/** A deterministic generator (the failures must reproduce). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const PIECES = ['', 't', 'run.delta', 'runId', 'text', 'run_0123456789abcdefghij', 'héllo', '漢字', '😀', '__proto__', 'constructor', 'a"b\\c\n', '\u0000', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33)];

function randomString(r: () => number): string {
  const k = Math.floor(r() * 4);
  let s = '';
  for (let i = 0; i < k; i++) s += PIECES[Math.floor(r() * PIECES.length)];
  if (r() < 0.02) s += 'L'.repeat(Math.floor(r() * 70_000)); // str16 and str32 headers, over the limit
  return s;
}

const KEYS = ['t', 'runId', 'text', 'id', '', '__proto__', 'k'.repeat(32), 'k'.repeat(33), 'clé'];

function randomValue(r: () => number): unknown {
  const k = r();
  if (k < 0.97) return randomString(r);
  if (k < 0.98) return Math.floor(r() * 1000);
  if (k < 0.99) return null;
  return [randomString(r)];
}

function randomMap(r: () => number): Record<string, unknown> {
  const n = Math.floor(r() * (r() < 0.05 ? 18 : 5)); // past 15: a map16, which the fast path leaves to the library
  const m: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) Object.defineProperty(m, r() < 0.9 ? KEYS[Math.floor(r() * KEYS.length)] : randomString(r), { value: randomValue(r), enumerable: true, configurable: true, writable: true });
  return m;
}

/** The library's answer: the value, or 'threw'. */
function libraryReads(b: Uint8Array): unknown {
  try {
    return library.decode(b);
  } catch {
    return 'threw';
  }
}

function agrees(b: Uint8Array, label: string): boolean {
  const fast = decodeFlatStringMap(b, MAX);
  if (fast === undefined) return false;
  const lib = libraryReads(b);
  assert.notEqual(lib, 'threw', `${label}: the fast path read bytes the library refuses`);
  assert.deepEqual(fast, lib, label);
  assert.equal(Object.getPrototypeOf(fast), Object.prototype, label);
  return true;
}

test('maps of strings read as the library reads them; everything else is left to it', () => {
  const r = rng(7);
  const enc = new Encoder();
  let read = 0;
  let damaged = 0;
  for (let i = 0; i < 3000; i++) {
    const m = randomMap(r);
    const b = enc.encode(m);
    if (agrees(b, `map ${i}`)) read++;
    // Damaged: a byte changed, cut short, or bytes added.
    for (let j = 0; j < 6; j++) {
      const d = Uint8Array.from(b);
      const kind = r();
      let x: Uint8Array = d;
      if (kind < 0.5 && d.length) d[Math.floor(r() * d.length)] = Math.floor(r() * 256);
      else if (kind < 0.8) x = d.subarray(0, Math.floor(r() * d.length));
      else x = Uint8Array.from([...d, Math.floor(r() * 256)]);
      if (agrees(x, `map ${i} damaged ${j}`)) damaged++;
    }
  }
  assert.ok(read > 1000, `the fast path read ${read} of the generated maps`);
  assert.ok(damaged > 100, `and ${damaged} damaged ones the library reads the same`);
});

test('what the fast path leaves alone: other shapes, long or non-ASCII keys, __proto__, strings over the limit, trailing bytes', () => {
  const enc = new Encoder();
  const none = (v: unknown, label: string, bytes = enc.encode(v)) => assert.equal(decodeFlatStringMap(bytes, MAX), undefined, label);
  none({ t: 'ping', id: 1 }, 'a number value');
  none({ t: 'run.message', blocks: [] }, 'an array value');
  none(['run.delta'], 'an array frame');
  none('run.delta', 'a string frame');
  none({ ['k'.repeat(33)]: 'v' }, 'a key over 32 bytes');
  none({ 'clé': 'v' }, 'a non-ASCII key');
  none(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'])), 'a map16');
  none(undefined, 'bad bytes', Uint8Array.from([0x83, 0xa1, 0x74]));
  none(undefined, 'empty input', new Uint8Array(0));
  none(undefined, 'trailing bytes', Uint8Array.from([...enc.encode({ t: 'x' }), 0xc0]));
  none(undefined, 'a string over the limit', enc.encode({ text: 'x'.repeat(MAX + 1) }));
  const proto = Uint8Array.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0xa1, 0x78]);
  none(undefined, '__proto__', proto);
  assert.equal(libraryReads(proto), 'threw', 'the library refuses it');
  assert.deepEqual(decodeFlatStringMap(enc.encode({ text: 'x'.repeat(MAX) }), MAX), { text: 'x'.repeat(MAX) }, 'a string at the limit is read');
  // Invalid UTF-8 in a value becomes U+FFFD, as the library's decoder (native-strings.ts) makes it.
  const bad = Uint8Array.from([0x81, 0xa1, 0x74, 0xa2, 0xc3, 0x28]);
  assert.deepEqual(decodeFlatStringMap(bad, MAX), libraryReads(bad));
  assert.deepEqual(new Decoder().decode(enc.encode({ a: 'b' })), decodeFlatStringMap(enc.encode({ a: 'b' }), MAX));
});

test('a run.delta frame is read by the fast path and still checked against its schema', () => {
  const delta = encodeFrame({ t: 'run.delta', runId: 'run_0123456789abcdefghij', text: 'héllo 😀' });
  assert.deepEqual(decodeFlatStringMap(delta, 1_000_000), { t: 'run.delta', runId: 'run_0123456789abcdefghij', text: 'héllo 😀' });
  assert.deepEqual(decodeHostFrame(delta).frame, { t: 'run.delta', runId: 'run_0123456789abcdefghij', text: 'héllo 😀' });
  // A map of strings that is no frame, or a delta without its text, fails the check as before.
  assert.match(decodeHostFrame(new Encoder().encode({ t: 'run.delta', runId: 'run_0123456789abcdefghij' })).error ?? '', /invalid frame/);
  assert.match(decodeHostFrame(new Encoder().encode({ t: 'nonsense' })).error ?? '', /invalid frame/);
  const proto = Uint8Array.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0xa1, 0x78]);
  assert.match(decodeHostFrame(proto).error ?? '', /not MessagePack/);
});
