// The replay ring of session events (sessions/events.ts): what a
// `Last-Event-ID` resume gets back once a turn has streamed more events than
// the ring keeps, and the frames it replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalBus } from '../src/bus/local.js';
import { SessionEvents, RING_SIZE } from '../src/sessions/events.js';

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
