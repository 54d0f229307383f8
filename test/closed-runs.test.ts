// The memory of ended runs: kept a minute (at most a generation more), dropped a generation at a
// time, oldest first, no timer left once empty; a closed run's late writes chained and waited for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClosedRuns, CLOSED_KEEP_MS, CLOSED_GENERATION_MS } from '../src/sessions/closed-runs.js';

const sweepOf = (c: ClosedRuns) => (now: number) => (c as unknown as { sweep(now: number): void }).sweep(now);
const timerOf = (c: ClosedRuns) => () => (c as unknown as { sweeper?: NodeJS.Timeout }).sweeper;

test('closed runs are known for at least CLOSED_KEEP_MS and at most a generation more, dropped oldest first; the sweep stops once none is left', () => {
  const c = new ClosedRuns();
  const sweep = sweepOf(c);
  const timer = timerOf(c);
  const t0 = Date.now();
  c.add('run_a', 'h1', undefined, t0);
  c.add('run_b', 'h2', undefined, t0 + CLOSED_GENERATION_MS - 1); // same generation as run_a, closed later
  c.add('run_c', 'h1', undefined, t0 + CLOSED_GENERATION_MS); // the next generation
  assert.ok(timer(), 'a sweep is scheduled while something is kept');
  assert.equal(c.hostOf('run_a'), 'h1');
  assert.deepEqual(c.get('run_b'), { runId: 'run_b', hostId: 'h2', chain: undefined });
  assert.equal(c.has('run_x'), false);
  // run_a's minute is over, but run_b (same generation) is not: the generation stays, run_a with it.
  sweep(t0 + CLOSED_KEEP_MS);
  assert.equal(c.has('run_a'), true);
  // The generation's newest run is a minute old: both go; the next generation stays.
  sweep(t0 + CLOSED_GENERATION_MS - 1 + CLOSED_KEEP_MS);
  assert.equal(c.has('run_a'), false);
  assert.equal(c.has('run_b'), false);
  assert.equal(c.hostOf('run_c'), 'h1');
  sweep(t0 + CLOSED_GENERATION_MS + CLOSED_KEEP_MS);
  assert.equal(c.has('run_c'), false);
  assert.equal(timer(), undefined, 'no timer runs with nothing kept');
  c.close();
});

test('a closed run keeps its late writes in order, waited for by chains() until they settle, then forgotten', async () => {
  const c = new ClosedRuns();
  let release!: () => void;
  const first = new Promise<void>((r) => (release = r));
  c.add('run_a', 'h1', first);
  assert.equal(c.get('run_a')?.chain, first);
  const order: string[] = [];
  c.follow('run_a', async () => void order.push('second'));
  assert.equal(c.chains().length, 1, 'one chain per run');
  const waiting = Promise.all(c.chains());
  await new Promise((r) => setImmediate(r));
  assert.equal(order.length, 0, 'the second write waits for the first');
  order.push('first');
  release();
  await waiting;
  assert.deepEqual(order, ['first', 'second']);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(c.chains(), [], 'a settled chain is not kept');
  assert.equal(c.get('run_a')?.chain, undefined);
  assert.equal(c.hostOf('run_a'), 'h1', 'the run itself stays known');
  // A write that fails ends its chain too, and the next one still runs.
  c.follow('run_a', () => Promise.reject(new Error('x')));
  let ran = false;
  c.follow('run_a', async () => void (ran = true));
  await Promise.allSettled(c.chains());
  assert.equal(ran, true);
  c.close();
});
