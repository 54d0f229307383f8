// The fixed window both node-local budgets share (host connects, replay bytes over the Bus).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WindowCounter } from '../src/ratelimit/window-counter.js';
import { ConnectRate } from '../src/hosts/connect-rate.js';

test('a key spends up to its limit per window; keys are apart; a new window starts from nothing', () => {
  const w = new WindowCounter(3, 1000);
  assert.deepEqual([1, 2, 3, 4].map(() => w.take('a', 1, 0)), [true, true, true, false]);
  assert.equal(w.take('b', 1, 10), true, 'another key has its own share');
  assert.equal(w.msLeft(400), 600);
  assert.equal(w.take('a', 1, 999), false);
  assert.equal(w.take('a', 1, 1000), true, 'the window ended: cleared whole');
  assert.equal(w.msLeft(1000), 1000);
});

test('amounts: what does not fit is not counted; a first amount larger than the limit still goes once', () => {
  const w = new WindowCounter(100, 1000);
  assert.equal(w.take('s', 60, 0), true);
  assert.equal(w.take('s', 50, 0), false, 'over: refused');
  assert.equal(w.take('s', 40, 0), true, 'the refused amount was not counted');
  assert.equal(w.take('s', 1, 0), false);
  assert.equal(w.take('big', 500, 0), true, 'nothing spent yet: the first amount goes');
  assert.equal(w.take('big', 1, 0), false);
});

test('ConnectRate: 0 means no limit; over the limit it answers the seconds left, at least 1', () => {
  const off = new ConnectRate(0, 60_000);
  for (let i = 0; i < 1000; i++) assert.equal(off.admit('h', 0), 0);
  const r = new ConnectRate(2, 60_000);
  assert.equal(r.admit('h', 0), 0);
  assert.equal(r.admit('h', 0), 0);
  assert.equal(r.admit('h', 30_000), 30);
  assert.equal(r.admit('h', 59_900), 1);
  assert.equal(r.admit('h', 60_000), 0);
});
