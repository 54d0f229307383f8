// The memory of ended runs: kept a minute, dropped oldest first, no timer left once empty.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClosedRuns, CLOSED_KEEP_MS } from '../src/sessions/closed-runs.js';

test('closed runs are known for CLOSED_KEEP_MS, swept oldest first, and the sweep stops once none is left', () => {
  const c = new ClosedRuns();
  const sweep = (now: number) => (c as unknown as { sweep(now: number): void }).sweep(now);
  const timer = () => (c as unknown as { sweeper?: NodeJS.Timeout }).sweeper;
  const t0 = Date.now();
  c.add('run_a', 'h1');
  const late = Promise.resolve();
  c.add('run_b', 'h2', late);
  assert.ok(timer(), 'a sweep is scheduled while something is kept');
  assert.equal(c.get('run_b')?.hostId, 'h2');
  assert.deepEqual(c.chains(), [undefined, late]);
  // run_b closes later than run_a: a sweep between their deadlines keeps only run_b.
  (c.get('run_b') as { at: number }).at = t0 + 10_000;
  sweep(t0 + CLOSED_KEEP_MS + 5_000);
  assert.equal(c.has('run_a'), false);
  assert.equal(c.has('run_b'), true);
  sweep(t0 + CLOSED_KEEP_MS + 10_001);
  assert.equal(c.has('run_b'), false);
  assert.equal(timer(), undefined, 'no timer runs with nothing kept');
  c.close();
});
