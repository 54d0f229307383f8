// PresenceUpkeep (src/hosts/presence-upkeep.ts) on its own, with a presence store that answers as
// told: entries the store had lost and got back are reported to the domain (work that waited for those
// hosts may start); a rebuild after the bus reconnects is tried again with backoff until a pass goes
// through, stops once the node closes, and a rebuild asked for during one runs another pass after it
// (the hosts held may have changed) rather than a second at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PresenceUpkeep } from '../src/hosts/presence-upkeep.js';
import type { Presence, Refreshed } from '../src/hosts/presence.js';

// The upkeep's backoff timer does not hold the process open (unref): these tests do, while they wait on it.
let keepAlive: NodeJS.Timeout;
before(() => void (keepAlive = setInterval(() => {}, 1000)));
after(() => clearInterval(keepAlive));

/** An upkeep whose store answers each refresh with the next of `answers` (an Error: thrown); the calls are recorded. */
function upkeep(answers: Array<Refreshed | Error>, opts: { held?: () => string[]; closing?: () => boolean } = {}) {
  const calls: Array<{ hostIds: string[]; node: string | null; ttl: number }> = [];
  let gate: Promise<void> | undefined;
  const store = {
    async refresh(hostIds: string[], node: string | null, ttl: number): Promise<Refreshed> {
      calls.push({ hostIds, node, ttl });
      await gate;
      const a = answers.shift() ?? { restored: [], ok: true };
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as Presence;
  const errors: unknown[] = [];
  const u = new PresenceUpkeep(store, 'node-x', 180_000, opts.held ?? (() => ['h1', 'h2']), opts.closing ?? (() => false), (fn) => {
    try {
      fn();
    } catch (e) {
      errors.push(e);
    }
  });
  return { u, calls, errors, hold: (p: Promise<void>) => (gate = p) };
}

test('refresh extends with this node and TTL; entries written again are reported to every handler, a throwing one does not stop the next', async () => {
  const { u, calls, errors } = upkeep([{ restored: ['h2'], ok: true }, { restored: [], ok: true }]);
  const seen: string[][] = [];
  u.onRestored(() => {
    throw new Error('a domain handler failed');
  });
  u.onRestored((ids) => seen.push(ids));
  assert.equal(await u.refresh(['h1', 'h2']), true);
  assert.deepEqual(calls, [{ hostIds: ['h1', 'h2'], node: 'node-x', ttl: 180_000 }]);
  assert.deepEqual(seen, [['h2']]);
  assert.equal(errors.length, 1);
  assert.equal(await u.refresh(['h1']), true);
  assert.deepEqual(seen, [['h2']], 'nothing restored, nothing reported');
});

test('a rebuild is tried again with backoff until a pass goes through (a failed write or a thrown one)', async () => {
  const { u, calls } = upkeep([{ restored: [], ok: false }, new Error('ECONNREFUSED'), { restored: ['h1'], ok: true }]);
  const seen: string[][] = [];
  u.onRestored((ids) => seen.push(ids));
  const t0 = Date.now();
  await u.rebuild();
  assert.equal(calls.length, 3);
  assert.ok(Date.now() - t0 >= 250 + 500 - 20, `waited ${Date.now() - t0} ms between the tries (250, then 500)`);
  assert.deepEqual(seen, [['h1']]);
});

test('a rebuild stops retrying once the node closes; with no host held it writes nothing', async () => {
  let closing = false;
  const { u, calls } = upkeep([{ restored: [], ok: false }, { restored: [], ok: false }, { restored: [], ok: false }], { closing: () => closing });
  const done = u.rebuild();
  await new Promise((r) => setTimeout(r, 100));
  closing = true;
  await done;
  assert.equal(calls.length, 1, 'no try after the close');
  const idle = upkeep([], { held: () => [] });
  await idle.u.rebuild();
  assert.equal(idle.calls.length, 0);
});

test('a rebuild asked for during one runs one more pass after it, with the hosts held then, not a second at once', async () => {
  let held = ['h1'];
  const { u, calls, hold } = upkeep([], { held: () => held });
  let open!: () => void;
  hold(new Promise<void>((r) => (open = r)));
  const first = u.rebuild();
  await new Promise((r) => setImmediate(r));
  held = ['h1', 'h2'];
  await u.rebuild(); // returns at once: the running rebuild takes it over
  assert.equal(calls.length, 1, 'no second pass while the first is in flight');
  hold(Promise.resolve());
  open();
  await first;
  assert.deepEqual(calls.map((c) => c.hostIds), [['h1'], ['h1', 'h2']]);
});
