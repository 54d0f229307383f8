// Frames a host produces while its channel is down wait in an outbox and go out after the next
// welcome. The hub admits a host's frames at HOST_FRAMES_PER_SECOND (closing the channel 4430,
// with every run on it, past the burst), so the outbox is flushed at a pace under that rate,
// merges a run's deltas, is bounded in bytes, and never drops a run.end to make room.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Channel } from '../src/host-cli/channel.js';
import { Outbox, OUTBOX_MAX_BYTES, OUTBOX_MAX_FRAMES } from '../src/host-cli/outbox.js';
import { PAYLOAD_MAX_BYTES } from '../src/host-cli/bounds.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { HOST_FRAMES_PER_SECOND_DEFAULT } from '../host-protocol/limits.js';
import { startMiniHub, type MiniHub } from './helpers/mini-hub.js';

type End = HostToHub & { t: 'run.end' };

/** A channel to `hub`, connected, then cut: resolves while it is down (frames sent now are queued). */
async function channelDown(hub: MiniHub, t: { after(fn: () => unknown): void }) {
  const statuses: string[] = [];
  let up: () => void;
  const ready = new Promise<void>((r) => (up = r));
  const ch = new Channel({ hub: hub.url, credential: 'ahh_x', name: 'h', capacity: 2, engines: () => [], running: () => [], onFrame: () => {}, status: (l) => statuses.push(l), onUp: () => up() });
  t.after(() => ch.stop());
  ch.start();
  await ready;
  let down: () => void;
  const gone = new Promise<void>((r) => (down = r));
  hub.socket()!.once('close', () => setImmediate(down));
  hub.socket()!.terminate();
  await gone;
  return ch;
}

test('after an outage the queued frames reach the hub under its frame rate, and every run.end arrives', async (t) => {
  const hub = await startMiniHub({ frameRate: HOST_FRAMES_PER_SECOND_DEFAULT });
  t.after(() => hub.close());
  const ch = await channelDown(hub, t);
  // More whole messages than the hub's burst (they cannot be merged), each run's end among them.
  const n = HOST_FRAMES_PER_SECOND_DEFAULT * 2 + 500;
  for (let i = 0; i < n; i++) ch.send({ t: 'run.message', runId: `run_${i % 3}`, role: 'assistant', blocks: [{ kind: 'text', content: `m${i}` }] });
  for (let r = 0; r < 3; r++) ch.send({ t: 'run.end', runId: `run_${r}`, ok: true });
  for (let r = 0; r < 3; r++) await hub.frames.until((f) => f.t === 'run.end' && f.runId === `run_${r}`, 30_000, () => hub.refused.join());
  assert.deepEqual(hub.refused, []);
  assert.equal(hub.frames.items.filter((f) => f.t === 'run.message').length, n, 'nothing lost on the way');
});

test('a run\'s deltas queued while down reach the hub merged, their text whole and in order', async (t) => {
  const hub = await startMiniHub({ frameRate: HOST_FRAMES_PER_SECOND_DEFAULT });
  t.after(() => hub.close());
  const ch = await channelDown(hub, t);
  let text = '';
  for (let i = 0; i < 20_000; i++) {
    ch.send({ t: 'run.delta', runId: 'run_a', text: `tok${i} ` });
    text += `tok${i} `;
    if (i % 1000 === 0) ch.send({ t: 'run.delta', runId: 'run_b', text: 'b' });
  }
  ch.send({ t: 'run.end', runId: 'run_a', ok: true });
  await hub.frames.until((f) => f.t === 'run.end', 30_000, () => hub.refused.join());
  const deltas = hub.frames.items.filter((f) => f.t === 'run.delta' && f.runId === 'run_a') as Array<HostToHub & { t: 'run.delta' }>;
  assert.equal(deltas.map((d) => d.text).join(''), text);
  assert.ok(deltas.length < 10, `merged into a few frames, got ${deltas.length}`);
  assert.deepEqual(hub.refused, []);
});

test('an outbox over its byte bound drops output before it drops a run.end', async (t) => {
  const hub = await startMiniHub();
  t.after(() => hub.close());
  const ch = await channelDown(hub, t);
  const big = 'x'.repeat(900_000);
  const count = Math.ceil(OUTBOX_MAX_BYTES / big.length) + 4;
  ch.send({ t: 'run.end', runId: 'run_early', ok: true });
  for (let i = 0; i < count; i++) ch.send({ t: 'run.message', runId: 'run_a', role: 'assistant', blocks: [{ kind: 'text', content: big }] });
  ch.send({ t: 'run.end', runId: 'run_a', ok: true });
  const end = (await hub.frames.until((f) => f.t === 'run.end' && f.runId === 'run_a', 30_000)) as End;
  assert.equal(end.ok, true);
  assert.ok(hub.frames.items.some((f) => f.t === 'run.end' && f.runId === 'run_early'));
  assert.ok(hub.frames.items.filter((f) => f.t === 'run.message').length < count, 'the oldest output made room');
});

test('a megabyte of small deltas merges into frames each under the string bound, the text whole and in order', () => {
  // Each append once re-measured and copied the whole merged text: 43,000 such deltas took 43 s of CPU.
  const box = new Outbox();
  let text = '';
  for (let i = 0; i < 70_000; i++) { // 1.1 MB: more than one frame's string bound
    const piece = `token-${i.toString().padStart(6, '0')} é `;
    box.push({ t: 'run.delta', runId: 'run_a', text: piece });
    text += piece;
  }
  const out = box.take(100) as Array<HostToHub & { t: 'run.delta' }>;
  assert.equal(box.length, 0);
  assert.equal(out.map((f) => f.text).join(''), text);
  assert.ok(out.every((f) => Buffer.byteLength(f.text) <= PAYLOAD_MAX_BYTES));
  assert.equal(out.length, Math.ceil(Buffer.byteLength(text) / PAYLOAD_MAX_BYTES));
  assert.equal(out.length, 2);
});

const delta = (runId: string, text: string): HostToHub => ({ t: 'run.delta', runId, text });
const message = (runId: string, content: string): HostToHub => ({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content }] });
const texts = (fs: HostToHub[]) => fs.map((f) => (f.t === 'run.delta' ? `d:${f.text}` : f.t === 'run.message' ? `m:${f.blocks[0].content}` : f.t));

test('a delta after another frame of its run is not merged into the delta before that frame; nor into one already sent', () => {
  const box = new Outbox();
  box.push(delta('run_a', 'one '));
  box.push(message('run_a', 'tool call'));
  box.push(delta('run_a', 'two'));
  assert.deepEqual(texts(box.take(10)), ['d:one ', 'm:tool call', 'd:two'], 'order kept');
  box.push(delta('run_a', 'three'));
  assert.deepEqual(texts(box.take(10)), ['d:three'], 'a delta sent is closed to appends');
});

test('the outbox holds at most OUTBOX_MAX_FRAMES frames, dropping output, never a run\'s end', () => {
  const box = new Outbox();
  for (let i = 0; i < OUTBOX_MAX_FRAMES + 2_000; i++) {
    box.push(message(`run_${i}`, 'm'));
    if (i % 1000 === 0) box.push({ t: 'run.end', runId: `run_${i}`, ok: true });
  }
  assert.equal(box.length, OUTBOX_MAX_FRAMES);
  const out = box.take(OUTBOX_MAX_FRAMES);
  assert.equal(out.filter((f) => f.t === 'run.end').length, 12);
});

test('over the byte bound, deltas go before messages (a run\'s message carries its deltas\' text), and merged text is counted', () => {
  const big = 'x'.repeat(900_000);
  const box = new Outbox();
  for (let i = 0; i < 10; i++) box.push(delta(`run_${i}`, big));
  for (let i = 0; i < 10; i++) box.push(message(`run_${i}`, big));
  const out = box.take(100);
  assert.equal(out.filter((f) => f.t === 'run.message').length, 10, 'every message kept');
  assert.ok(out.filter((f) => f.t === 'run.delta').length < 10, 'deltas made the room');

  // One run's deltas merge: what they add to a waiting delta counts against the bound too.
  const merged = new Outbox();
  const piece = 'y'.repeat(100_000);
  for (let i = 0; i < 200; i++) merged.push(delta('run_a', piece)); // 20 MB in all
  const kept = merged.take(1000).reduce((n, f) => n + Buffer.byteLength((f as HostToHub & { t: 'run.delta' }).text), 0);
  assert.ok(kept <= OUTBOX_MAX_BYTES, `${kept} bytes of deltas held, over the ${OUTBOX_MAX_BYTES}-byte bound`);
});
