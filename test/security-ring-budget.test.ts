// The replay rings of a node (sessions/events.ts) together. Each session's ring is bounded
// (RING_MAX_BYTES) and a finished turn's ring is kept a minute for late resumers; so a host
// whose runs stream megabytes and end, one session after another, made the node keep that many
// megabytes per session for a minute — 240 MiB a minute for each run slot it had, many hosts
// more. The node's rings are held to one budget: finished rings go first, oldest first, and a
// growing live ring gives up its older events when only live rings are left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalBus } from '../src/bus/local.js';
import { SessionEvents } from '../src/sessions/events.js';
import { RING_MAX_BYTES, RINGS_MAX_BYTES } from '../src/limits.js';

const MiB = 1024 * 1024;
const delta = 'd'.repeat(100 * 1024);

/** One turn of ≈ `mib` MiB of deltas in session `sid`, ended when `end`. */
function turn(events: SessionEvents, sid: string, mib: number, end = true): void {
  events.emit(sid, `run_${sid}`, 'accepted', {});
  for (let i = 0; i < mib * 10; i++) events.emit(sid, `run_${sid}`, 'message.delta', { delta });
  if (end) events.emit(sid, `run_${sid}`, 'run.completed', { status: 'completed' });
}

test('a node keeps its rings within one budget (RINGS_MAX_BYTES by default)', () => {
  assert.ok(RINGS_MAX_BYTES >= 16 * RING_MAX_BYTES && RINGS_MAX_BYTES <= 256 * MiB, `RINGS_MAX_BYTES ${RINGS_MAX_BYTES}`);
  const events = new SessionEvents(new LocalBus());
  assert.equal(events.ringsMaxBytes, RINGS_MAX_BYTES);
  events.close();
});

test('finished turns past the node\'s budget: the oldest rings go first, the newest still replay whole', () => {
  const budget = 16 * MiB;
  const events = new SessionEvents(new LocalBus(), undefined, { ringsMaxBytes: budget });
  try {
    for (let s = 0; s < 20; s++) {
      turn(events, `ses_${s}`, 3); // ≈ 3 MiB of frames each, ≈ 60 MiB in all
      assert.ok(events.ringsBytes <= budget, `after ${s + 1} turns the rings take ${events.ringsBytes} bytes, over ${budget}`);
    }
    assert.equal(events.replay('ses_0', 'run_ses_0'), undefined, 'the oldest finished ring is gone');
    const last = events.replay('ses_19', 'run_ses_19');
    assert.ok(last, 'the newest finished ring is kept');
    assert.equal(last.length, 1 + 30 + 1, 'whole: accepted, every delta, the end');
    assert.ok(events.ringsBytes > budget / 4, 'the budget is used, not emptied');
  } finally {
    events.close();
  }
});

test('a live turn keeps its ring while finished ones make room; with live rings alone over the budget the growing one gives up its older events', () => {
  const budget = 16 * MiB;
  const events = new SessionEvents(new LocalBus(), undefined, { ringsMaxBytes: budget });
  try {
    turn(events, 'ses_live', 3, false);
    for (let s = 0; s < 10; s++) turn(events, `ses_done_${s}`, 3);
    assert.equal(events.replay('ses_live', 'run_ses_live')?.length, 31, 'the live ring is whole: finished rings went instead');
    // Live rings only, more than the budget holds.
    for (let s = 0; s < 6; s++) turn(events, `ses_more_${s}`, 3, false);
    assert.ok(events.ringsBytes <= budget + 2 * delta.length, `live rings take ${events.ringsBytes} bytes`);
    const newest = events.replay('ses_more_5', 'run_ses_more_5', 30);
    assert.deepEqual(newest?.map((e) => e.n), [31], 'the newest event of the growing ring can still be resumed from');
    assert.equal(events.replay('ses_more_5', 'run_ses_more_5'), null, 'its start is no longer there: a resumer gets live events only');
    for (let s = 0; s < 10; s++) assert.equal(events.replay(`ses_done_${s}`, `run_ses_done_${s}`), undefined);
  } finally {
    events.close();
  }
});

test('a dropped ring\'s turn numbers go with it, and a later turn in its session starts a ring of its own', () => {
  const events = new SessionEvents(new LocalBus(), undefined, { ringsMaxBytes: 8 * MiB });
  try {
    turn(events, 'ses_a', 3);
    turn(events, 'ses_b', 3);
    turn(events, 'ses_c', 3);
    assert.equal(events.replay('ses_a', 'run_ses_a'), undefined);
    events.emit('ses_a', 'run_next', 'accepted', {});
    assert.deepEqual(events.replay('ses_a', 'run_next')?.map((e) => e.n), [1]);
  } finally {
    events.close();
  }
  assert.equal(events.ringsBytes, 0, 'closing lets every ring go');
});
