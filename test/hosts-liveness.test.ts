// The liveness sweep (src/hosts/liveness.ts), on mocked timers: a host silent
// since just after a sweep must be closed early enough that its removal from
// presence still reaches every node within the heartbeat window. Closed at the
// first sweep past (window − one check period) of silence with sweeps one
// check period apart, the unluckiest phase closed it at the window's very end:
// under a loaded event loop the close plus the propagation overran the window
// (bench/RESULTS.md, nineteenth session: 15,147 ms for a 15,000 ms window).
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { LivenessSweep } from '../src/hosts/liveness.js';
import type { HostConnection } from '../src/hosts/connection.js';
import type { PresenceUpkeep } from '../src/hosts/presence-upkeep.js';
import type { HostStore } from '../src/hosts/store.js';

test('a silent host is closed at least half a check period before its window ends, whatever the phase; never before window − one period', () => {
  mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
  try {
    for (const window of [15_000, 1_500]) {
      const check = Math.min(1000, Math.max(250, Math.floor(window / 10)));
      const closedAt = new Map<string, number>();
      const held = new Map<string, HostConnection>();
      const upkeep = { refresh: async () => true } as unknown as PresenceUpkeep;
      const store = { touchMany() {} } as unknown as HostStore;
      const sweep = new LivenessSweep(window, 180_000, held, new Set(), upkeep, store, () => {});
      // Hosts that said their last frame at every phase of a check period, from just after a sweep on.
      const start = Date.now();
      const phases = [1, check / 4, check / 2, (3 * check) / 4, check - 1];
      for (const [i, phase] of phases.entries()) {
        mock.timers.tick(i === 0 ? phase : phase - phases[i - 1]);
        const hostId = `hst_${i}`;
        held.set(hostId, { hostId, lastSeen: Date.now(), close: () => void (closedAt.has(hostId) || closedAt.set(hostId, Date.now())) } as unknown as HostConnection);
      }
      while (closedAt.size < phases.length && Date.now() - start < 3 * window) mock.timers.tick(1);
      sweep.close();
      for (const [i, phase] of phases.entries()) {
        const silence = closedAt.get(`hst_${i}`)! - (start + phase);
        assert.ok(silence <= window - check / 2, `window ${window}: silent since ${phase} ms into a period, closed after ${silence} ms`);
        assert.ok(silence >= window - check, `window ${window}: closed after only ${silence} ms of silence`);
      }
    }
  } finally {
    mock.timers.reset();
  }
});

test('each held host\'s presence is extended once every third of its TTL and its last seen written once a minute, a slice of the hosts at each sweep', () => {
  mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
  try {
    const window = 15_000;
    const ttl = 180_000;
    const held = new Map<string, HostConnection>();
    // Hosts of a connect storm: all there at once.
    for (let i = 0; i < 1200; i++) held.set(`hst_${i}`, { hostId: `hst_${i}`, lastSeen: Date.now(), sweepOrder: -1, close() {} } as unknown as HostConnection);
    const calls: string[][] = [];
    const upkeep = { refresh: async (ids: string[]) => (calls.push(ids), true) } as unknown as PresenceUpkeep;
    const touched: string[][] = [];
    const store = { touchMany: (ids: Iterable<string>) => void touched.push([...ids]) } as unknown as HostStore;
    let forwards = 0;
    const sweep = new LivenessSweep(window, ttl, held, new Set(), upkeep, store, () => forwards++);
    for (let t = 0; t < ttl / 3; t += 100) {
      for (const c of held.values()) c.lastSeen = Date.now(); // every host pings
      mock.timers.tick(100);
    }
    sweep.close();
    /** Every held host once over the period, at most 20 in one sweep. */
    const onceInSlices = (batches: string[][], what: string) => {
      const times = new Map<string, number>();
      for (const ids of batches) for (const id of ids) times.set(id, (times.get(id) ?? 0) + 1);
      assert.equal(times.size, held.size, `${what}: every host`);
      assert.ok([...times.values()].every((n) => n === 1), `${what}: once in the period`);
      const largest = Math.max(...batches.map((ids) => ids.length));
      assert.ok(largest <= 20, `${what}: a slice, not every host at once: ${largest} in one sweep`);
    };
    onceInSlices(calls, 'presence extended once in a third of the TTL (was: every third of the heartbeat window)');
    // Last seen reaches the database once a minute for each host, a slice at each sweep: all of a
    // node's hosts in one statement made a burst of PostgreSQL work once a minute (every node at the
    // same moment when they started together), felt by the pings and messages of that second.
    onceInSlices(touched, 'last seen written once a minute');
    assert.ok(forwards >= 11 && forwards <= 13, `stale forwards dropped every third of the window: ${forwards}`);
  } finally {
    mock.timers.reset();
  }
});
