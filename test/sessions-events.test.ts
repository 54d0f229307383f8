// The replay ring of session events (sessions/events.ts): what a
// `Last-Event-ID` resume gets back once a turn has streamed more events than
// the ring keeps, and the frames it replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalBus } from '../src/bus/local.js';
import { SessionEvents, RING_SIZE } from '../src/sessions/events.js';
import { RING_MAX_BYTES } from '../src/limits.js';

test('the ring keeps the last RING_SIZE events of the turn: older resumes are refused, newer ones replay exactly what follows', () => {
  const events = new SessionEvents(new LocalBus());
  try {
    events.emit('ses_1', 'run_a', 'accepted', {});
    for (let i = 0; i < RING_SIZE + 10; i++) events.emit('ses_1', 'run_a', 'message.delta', { delta: `d${i}` });
    // 1 + RING_SIZE + 10 events: the first 11 are gone.
    assert.equal(events.replay('ses_1', 'run_a'), null, 'a replay from the start cannot be served');
    assert.equal(events.replay('ses_1', 'run_a', 5), null, 'a resume from an evicted event is refused');
    const tail = events.replay('ses_1', 'run_a', RING_SIZE + 1);
    assert.ok(tail);
    assert.deepEqual(tail.map((e) => e.n), Array.from({ length: 10 }, (_, i) => RING_SIZE + 2 + i));
    assert.equal(tail[0].event, 'message.delta');
    assert.equal(tail[0].frame, `id: run_a:${RING_SIZE + 2}\nevent: message.delta\ndata: ${JSON.stringify({ sessionId: 'ses_1', status: 'processing', delta: `d${RING_SIZE}` })}\n\n`);
    assert.equal(events.replay('ses_1', 'run_other', 3), undefined, 'another turn is not in this ring');

    // A new turn replaces the ring; its end sorts after every other event.
    events.emit('ses_1', 'run_b', 'accepted', {});
    events.emit('ses_1', 'run_b', 'run.completed', { status: 'completed' });
    assert.equal(events.replay('ses_1', 'run_a'), undefined, 'the new turn replaced the old one');
    const b = events.replay('ses_1', 'run_b');
    assert.ok(b);
    assert.deepEqual(b.map((e) => e.event), ['accepted', 'run.completed']);
    assert.ok(b[1].n > b[0].n);
  } finally {
    events.close();
  }
});

test('the ring replays exactly what a plain list of the turn\'s last frames would, through growth, moves and evictions', () => {
  const events = new SessionEvents(new LocalBus());
  try {
    const frames: string[] = [];
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    events.emit('ses_m', 'run_m', 'accepted', {});
    for (let i = 0; i < 5000; i++) {
      // Mostly small deltas, now and then a large or multi-byte one.
      const size = rnd(10) === 0 ? 2000 + rnd(40_000) : 1 + rnd(200);
      const delta = (rnd(3) === 0 ? 'ü漢' : 'ab').repeat(Math.ceil(size / 2)).slice(0, size);
      events.emit('ses_m', 'run_m', 'message.delta', { delta });
      frames.push(`id: run_m:${i + 2}\nevent: message.delta\ndata: ${JSON.stringify({ sessionId: 'ses_m', status: 'processing', delta })}\n\n`);
      if (i % 500 === 499) {
        const tail = events.replay('ses_m', 'run_m', i + 2 - 50)!;
        assert.deepEqual(tail.map((e) => e.frame), frames.slice(-50), `the last 50 frames after ${i + 1} deltas`);
        assert.deepEqual(tail.map((e) => e.n), Array.from({ length: 50 }, (_, k) => i + 3 - 50 + k));
      }
    }
  } finally {
    events.close();
  }
});

test('a ring grows its room for events while the byte bound evicts from its front: what it replays is still the turn\'s last frames, in order', () => {
  // The ring starts with room for a few events and doubles it; large frames make the byte bound
  // evict before it is full, so a later growth must move held frames that wrap around its arrays.
  const events = new SessionEvents(new LocalBus());
  try {
    const held: Array<{ n: number; frame: string; bytes: number }> = [];
    let n = 1;
    const push = (delta: string) => {
      n++;
      events.emit('ses_g', 'run_g', 'message.delta', { delta });
      const frame = `id: run_g:${n}\nevent: message.delta\ndata: ${JSON.stringify({ sessionId: 'ses_g', status: 'processing', delta })}\n\n`;
      const bytes = Buffer.byteLength(frame);
      // The rule the ring keeps: the newest frame stays; older ones go while the bytes would pass the bound.
      let sum = held.reduce((a, h) => a + h.bytes, 0);
      while (held.length && sum + bytes > RING_MAX_BYTES) sum -= held.shift()!.bytes;
      held.push({ n, frame, bytes });
      if (held.length > RING_SIZE) held.shift();
    };
    const check = (when: string) => {
      const first = held[0].n;
      assert.equal(events.replay('ses_g', 'run_g', first - 2), null, `${when}: the event before the oldest held is gone`);
      const all = events.replay('ses_g', 'run_g', first - 1)!;
      assert.deepEqual(all.map((e) => e.n), held.map((h) => h.n), when);
      assert.deepEqual(all.map((e) => e.frame), held.map((h) => h.frame), when);
      assert.equal(events.ringBytes('ses_g'), held.reduce((a, h) => a + h.bytes, 0), when);
    };
    events.emit('ses_g', 'run_g', 'accepted', {});
    // About 13 large frames fit: evictions from the front while the ring has room for 16.
    for (let i = 0; i < 30; i++) push(`${i}:`.padEnd(250_000 + i * 1000, 'x'));
    check('after the large frames');
    // Small ones: the room grows (the first time with the held frames wrapped round), up to RING_SIZE.
    for (let i = 0; i < 3000; i++) {
      push(`small ${i} ü`);
      if (i < 40 || i % 250 === 0) check(`after ${i + 1} small frames`);
    }
    check('at the end');
  } finally {
    events.close();
  }
});

test('a delta\'s frame is formatEvent\'s, byte for byte, for any text; a delta carrying more than its text gets the general frame', async () => {
  const { formatDelta } = await import('../src/sessions/events.js');
  const { formatEvent } = await import('../src/server/sse.js');
  const texts = ['', 'plain', 'a "quoted" \\ back\nslash\ttab\r', '\u0000\u001f\u007f\u2028\u2029', 'héllo 漢字 😀', '\ud800 lone \udfff surrogates', '</script>', 'x'.repeat(100_000)];
  for (let i = 0; i < 200; i++) texts.push(String.fromCharCode(...Array.from({ length: i % 40 }, (_, j) => (i * 7919 + j * 104729) % 0xffff)));
  for (const text of texts) {
    for (const sid of ['ses_1', 'ses_"odd\\']) {
      assert.equal(formatDelta(`run_a:${text.length}`, sid, text), formatEvent('message.delta', { sessionId: sid, status: 'processing', delta: text }, `run_a:${text.length}`), JSON.stringify(text.slice(0, 40)));
    }
  }
  const events = new SessionEvents(new LocalBus());
  try {
    events.emit('ses_1', 'run_a', 'accepted', {});
    events.emit('ses_1', 'run_a', 'message.delta', { delta: 'hi' });
    events.emit('ses_1', 'run_a', 'message.delta', { delta: 'hi', extra: 1 });
    const [, d1, d2] = events.replay('ses_1', 'run_a')!;
    assert.equal(d1.frame, 'id: run_a:2\nevent: message.delta\ndata: {"sessionId":"ses_1","status":"processing","delta":"hi"}\n\n');
    assert.equal(d2.frame, 'id: run_a:3\nevent: message.delta\ndata: {"sessionId":"ses_1","status":"processing","delta":"hi","extra":1}\n\n');
  } finally {
    events.close();
  }
});
