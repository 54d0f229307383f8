// A reader on a node that did not produce its turn asks the other nodes over the Bus for the events
// it missed (sessions/resume.ts), and the producer publishes them — up to a ring's 4 MiB per ask. The
// ask is one small GET with Last-Event-ID: a client reconnecting in a loop (its own session, its own
// host streaming) made the producer encode and Redis carry 4 MiB per request, thousands of times the
// bytes it sent. A producer publishes at most REPLAY_BUS_BYTES_PER_SESSION of replays per session per
// window; past it the reader is told the replay is not there (it gets live events, and the history).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bus, BusHandler } from '../src/bus/bus.js';
import { SessionEvents } from '../src/sessions/events.js';
import { SessionResume, REPLAY_BUS_BYTES_PER_SESSION } from '../src/sessions/resume.js';

/** Two nodes' worth of a Redis-like bus in one process: every publish reaches every subscriber. */
function sharedBus(): { bus: Bus; published: Map<string, number> } {
  const subs = new Map<string, Set<BusHandler>>();
  const published = new Map<string, number>();
  const bus: Bus = {
    kind: 'redis',
    publish(topic, payload) {
      published.set(topic, (published.get(topic) ?? 0) + payload.length);
      for (const h of subs.get(topic) ?? []) queueMicrotask(() => h(payload));
    },
    subscribe(topic, handler) {
      if (!subs.has(topic)) subs.set(topic, new Set());
      subs.get(topic)!.add(handler);
      return () => subs.get(topic)?.delete(handler);
    },
    ready: async () => {},
    healthy: () => true,
    onReconnect: () => () => {},
    close: async () => {},
  };
  return { bus, published };
}

test('a producer publishes a session\'s replays only up to its byte budget per window; past it the reader gets live events only', async () => {
  const { bus, published } = sharedBus();
  const eventsA = new SessionEvents(bus);
  const eventsB = new SessionEvents(bus);
  const a = new SessionResume(eventsA, bus, 'node-a');
  const b = new SessionResume(eventsB, bus, 'node-b');
  try {
    const delta = 'x'.repeat(100 * 1024);
    eventsA.emit('ses_1', 'run_1', 'message.delta', { delta: 'first' });
    for (let i = 0; i < 38; i++) eventsA.emit('ses_1', 'run_1', 'message.delta', { delta }); // ≈ 3.8 MiB kept on node A
    const first = await b.resume('ses_1', 'run_1', 'run_1:2');
    assert.ok(first.replay && first.replay.length === 38, 'a reader on B gets what it missed from A');
    let refused = 0;
    for (let i = 0; i < 20; i++) if ((await b.resume('ses_1', 'run_1', 'run_1:2')).replay === null) refused++;
    const answered = published.get('session-replay:node-b') ?? 0;
    assert.ok(answered <= REPLAY_BUS_BYTES_PER_SESSION + 4.5 * 1024 * 1024, `node A published ${answered} bytes of replays for one session`);
    assert.ok(refused >= 15, `${refused} of 20 asks past the budget were answered "not there"`);
    // Another session's reader is not held to this session's budget.
    eventsA.emit('ses_2', 'run_2', 'message.delta', { delta: 'a' });
    eventsA.emit('ses_2', 'run_2', 'message.delta', { delta: 'b' });
    assert.deepEqual((await b.resume('ses_2', 'run_2', 'run_2:2'))?.replay?.map((e) => e.n), [3]);
  } finally {
    a.close();
    b.close();
    eventsA.close();
    eventsB.close();
  }
});
