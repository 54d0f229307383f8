// The heartbeat's fast path (host-protocol/ping.ts) must answer exactly as the general path
// does, or not at all: every ping it takes must decode as a valid ping frame, and the pong it
// makes must be the bytes the general path would send; over generated pings, over other forms
// of the same frame, and over pings damaged byte by byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Encoder } from '@msgpack/msgpack';
import { decodeHostFrame, encodeFrame } from '../host-protocol/codec.js';
import { isPlainPing, pingToPong } from '../host-protocol/ping.js';

/** A deterministic generator (the failures must reproduce). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** What the general path answers to these bytes: the pong's bytes, or undefined when it is no ping (or no frame). */
function generalAnswer(bytes: Uint8Array): Uint8Array | undefined {
  const d = decodeHostFrame(bytes);
  if (d.error !== undefined || d.frame.t !== 'ping') return undefined;
  return encodeFrame({ t: 'pong', id: d.frame.id, ts: d.frame.ts });
}

function fastAnswer(bytes: Uint8Array): Uint8Array | undefined {
  return isPlainPing(bytes) ? pingToPong(bytes.slice()) : undefined;
}

const ID_SAMPLES = [1, 2, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1];
const TS_SAMPLES = [undefined, 0, 1, 127, 128, 65_536, 2 ** 32 - 1, 2 ** 32, Date.now(), 2 ** 53 - 1];

test('every ping the CLI writes (an integer id ≥ 1, an integer ts or none) takes the fast path, and its pong is the general path\'s', () => {
  const r = rng(1);
  const ids = [...ID_SAMPLES, ...Array.from({ length: 200 }, () => 1 + Math.floor(r() * (2 ** 32 - 2)))];
  for (const id of ids) {
    for (const ts of [...TS_SAMPLES, Math.floor(r() * 2 ** 53)]) {
      const ping = encodeFrame({ t: 'ping', id, ...(ts === undefined ? {} : { ts }) });
      assert.ok(isPlainPing(ping), `id ${id} ts ${ts}`);
      assert.deepEqual(fastAnswer(ping), generalAnswer(ping), `id ${id} ts ${ts}`);
    }
  }
});

test('other forms of a ping, and frames that are no ping, take the general path', () => {
  const enc = new Encoder();
  const others: Array<[string, Uint8Array]> = [
    ['id 0 (refused by the schema)', enc.encode({ t: 'ping', id: 0 })],
    ['negative id', enc.encode({ t: 'ping', id: -1 })],
    ['fractional id', enc.encode({ t: 'ping', id: 1.5 })],
    ['id as a string', enc.encode({ t: 'ping', id: '1' })],
    ['id of 2^53 and more', enc.encode({ t: 'ping', id: 2 ** 53 })],
    ['fractional ts', enc.encode({ t: 'ping', id: 1, ts: 1.5 })],
    ['negative ts', enc.encode({ t: 'ping', id: 1, ts: -5 })],
    ['ts of 2^53 and more (not exact as a number)', enc.encode({ t: 'ping', id: 1, ts: 2 ** 53 + 2 })],
    ['keys in another order', enc.encode({ id: 1, t: 'ping', ts: 2 })],
    ['ts before id', enc.encode({ t: 'ping', ts: 2, id: 1 })],
    ['an extra key', enc.encode({ t: 'ping', id: 1, ts: 2, x: 3 })],
    ['no id', enc.encode({ t: 'ping' })],
    ['a pong', enc.encode({ t: 'pong', id: 1, ts: 2 })],
    ['another tag', enc.encode({ t: 'pinG', id: 1, ts: 2 })],
    ['a run.delta', enc.encode({ t: 'run.delta', runId: 'run_x', text: 'hi' })],
    ['empty', new Uint8Array(0)],
  ];
  const plain = encodeFrame({ t: 'ping', id: 1, ts: 2 });
  others.push(['an id in a longer encoding than needed', Uint8Array.from([0x82, 0xa1, 0x74, 0xa4, 0x70, 0x69, 0x6e, 0x67, 0xa2, 0x69, 0x64, 0xcc, 0x0d])]);
  others.push(['a trailing byte', Uint8Array.from([...plain, 0xc0])], ['truncated', plain.slice(0, plain.length - 1)]);
  for (const [what, bytes] of others) assert.equal(isPlainPing(bytes), false, what);
});

test('pings damaged byte by byte: whatever the fast path takes, the general path takes as the same ping', () => {
  const r = rng(7);
  let taken = 0;
  for (let n = 0; n < 20_000; n++) {
    const id = ID_SAMPLES[Math.floor(r() * ID_SAMPLES.length)];
    const ts = TS_SAMPLES[Math.floor(r() * TS_SAMPLES.length)];
    const bytes = encodeFrame({ t: 'ping', id, ...(ts === undefined ? {} : { ts }) }).slice();
    const edits = 1 + Math.floor(r() * 3);
    for (let e = 0; e < edits; e++) bytes[Math.floor(r() * bytes.length)] = Math.floor(r() * 256);
    const fast = fastAnswer(bytes);
    if (!fast) continue;
    taken++;
    assert.deepEqual(fast, generalAnswer(bytes), `bytes ${Buffer.from(bytes).toString('hex')}`);
  }
  assert.ok(taken > 100, `only ${taken} damaged pings were still plain pings`);
});
