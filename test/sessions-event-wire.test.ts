// Session events between nodes (src/sessions/event-wire.ts): the producing
// node's SSE frame behind a fixed header. What a reader on another node gets
// must be what the producing node's own readers get (frame, number, event,
// id, data), whatever the text; malformed payloads are refused, not thrown on;
// and a MessagePack event of a node from before the format is still read.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeWire, encodeWire, WIRE_TAG } from '../src/sessions/event-wire.js';
import { SessionEvents, type SessionEvent } from '../src/sessions/events.js';
import { RedisBus } from '../src/bus/redis.js';
import { publishObj } from '../src/bus/bus.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { eventually } from './helpers/host.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : undefined;
const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of closers) await c();
});

test('a wire event decodes to what was encoded, for any run id and frame text', () => {
  const texts = ['', 'plain', 'héllo 漢字 😀\r\n\u0000', '\ud800 lone', 'x'.repeat(100_000)];
  for (const frame of texts) {
    for (const at of [undefined, 1_764_000_000_123, 0]) {
      const w = decodeWire(encodeWire(2, 7, at, 'run_ü:1', frame), 7);
      assert.deepEqual(w, { code: 2, n: 7, at, runId: 'run_ü:1', frame: Buffer.from(frame).toString() });
    }
  }
});

test('malformed wire payloads are refused', () => {
  const good = encodeWire(2, 3, 5, 'run_a', 'frame');
  assert.ok(decodeWire(good, 7));
  const bad = (mutate: (b: Buffer) => Buffer) => decodeWire(mutate(Buffer.from(good)), 7);
  assert.equal(bad((b) => b.subarray(0, 10)), undefined, 'short');
  assert.equal(bad((b) => ((b[0] = 0x82), b)), undefined, 'not the tag');
  assert.equal(bad((b) => ((b[1] = 7), b)), undefined, 'no such event');
  assert.equal(bad((b) => (b.writeDoubleLE(1.5, 2), b)), undefined, 'a number that is not an integer');
  assert.equal(bad((b) => (b.writeDoubleLE(0, 2), b)), undefined, 'a number below 1');
  assert.equal(bad((b) => (b.writeUInt16LE(0, 18), b)), undefined, 'no run id');
  assert.equal(bad((b) => (b.writeUInt16LE(5000, 18), b)), undefined, 'a run id past the end');
  assert.throws(() => encodeWire(2, 3, 5, 'r'.repeat(2000), 'f'));
  assert.equal(good[0], WIRE_TAG);
});

async function twoNodes(): Promise<[SessionEvents, SessionEvents, RedisBus, RedisBus]> {
  const url = (redis as { url: string }).url;
  const prefix = testPrefix();
  const a = await RedisBus.connect(url, { prefix });
  const b = await RedisBus.connect(url, { prefix });
  const ea = new SessionEvents(a);
  const eb = new SessionEvents(b);
  closers.push(() => ea.close(), () => eb.close(), () => a.close(), () => b.close());
  return [ea, eb, a, b];
}

test("a reader on another node gets the producer's events: the same frames, ids and data", { skip }, async () => {
  const [producer, reader, , busB] = await twoNodes();
  const sid = `ses_${randomBytes(4).toString('hex')}`;
  const got: SessionEvent[] = [];
  reader.subscribe(sid, (e) => got.push(e));
  await busB.ready(); // the SUBSCRIBE active in Redis: nothing published before it would reach the reader
  producer.emit(sid, 'run_a', 'accepted', { runId: 'run_a' });
  producer.emit(sid, 'run_a', 'message.delta', { delta: 'héllo "x"\n' }, { at: 1234 });
  producer.emit(sid, 'run_a', 'tool.started', { tool: { id: 't1', name: 'Bash' } });
  producer.emit(sid, 'run_a', 'run.completed', { status: 'completed' });
  await eventually(async () => got.length === 4 || undefined, 5000, 10);
  const ring = producer.replay(sid, 'run_a')!;
  assert.deepEqual(got.map((e) => e.id), ['run_a:1', 'run_a:2', 'run_a:3', `run_a:${2 ** 50}`]);
  assert.deepEqual(got.map((e) => e.event), ['accepted', 'message.delta', 'tool.started', 'run.completed']);
  assert.deepEqual(got.map((e) => e.runId), ['run_a', 'run_a', 'run_a', 'run_a']);
  assert.deepEqual(got.map((e) => e.at), [undefined, 1234, undefined, undefined]);
  assert.deepEqual(got[1].data, { sessionId: sid, status: 'processing', delta: 'héllo "x"\n' });
  assert.deepEqual(got[2].data, { sessionId: sid, status: 'processing', tool: { id: 't1', name: 'Bash' } });
  assert.deepEqual(got[3].data, { sessionId: sid, status: 'completed' });
  // What the reader would write is the frame the producer keeps for its own readers and resumes.
  const frames = ring.map((r) => r.frame);
  const { formatEvent } = await import('../src/server/sse.js');
  assert.deepEqual(got.map((e) => formatEvent(e.event, e.data, e.id)), frames);
});

test('an event of a node from before the wire format (a MessagePack map) is still read', { skip }, async () => {
  const [, reader, busA, busB] = await twoNodes();
  const sid = `ses_${randomBytes(4).toString('hex')}`;
  const got: SessionEvent[] = [];
  reader.subscribe(sid, (e) => got.push(e));
  await busB.ready();
  const old: SessionEvent = { id: 'run_b:2', runId: 'run_b', event: 'message.delta', data: { sessionId: sid, status: 'processing', delta: 'old' }, at: 5 };
  publishObj(busA, `session:${sid}`, old);
  await eventually(async () => got.length === 1 || undefined, 5000, 10);
  assert.deepEqual({ ...got[0] }, old);
});
