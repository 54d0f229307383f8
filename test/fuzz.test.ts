// The CI-sized run of bench/fuzz.ts (issue 14 part 7): the same generator,
// a fixed seed, a few thousand requests across every route and a few thousand
// mutated host frames → no 5xx, the hub still healthy, no unhandled rejection,
// no channel closed with a code outside the close-code table.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { runFuzz } from '../bench/fuzz.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ hostConnectsPerMinute: 0 }) // the fuzz reconnects its host after every close, hundreds of times a minute;
});
after(() => t.close());

test('fuzz, fixed seed: 3000 requests over every route and 3000 host frames → zero 5xx, zero crashes, zero unhandled rejections', async () => {
  const s = await runFuzz({ requests: 3000, frames: 3000, seed: 20261123, concurrency: 8, hub: t });
  assert.equal(s.requests, 3000);
  assert.equal(s.frames, 3000);
  assert.deepEqual(s.fiveXX, {}, `5xx answers (replay with FUZZ_SEED=${s.seed}): ${JSON.stringify(s.examples, null, 1)}`);
  assert.equal(s.crashes, 0, 'the hub stopped answering /api/v1/health');
  assert.equal(s.rejections, 0, 'unhandled rejections in the hub process');
  assert.equal(s.uncaught, 0, 'uncaught exceptions in the hub process');
  assert.deepEqual(s.unexpectedCloses, {}, 'host channels closed with a code outside the table');
  assert.ok(s.status['400'] > 0 && s.status['200'] > 0, `both refusals and successes were exercised: ${JSON.stringify(s.status)}`);
});
