// HostChannels seen from the domains that use it: batched host-up events and
// the per-host cost of a channel, with stub sockets (no network).
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { HostChannels } from '../src/hosts/gateway-impl.js';
import { LocalPresence } from '../src/hosts/presence.js';
import { HostStore } from '../src/hosts/store.js';
import type { Socket } from '../src/hosts/connection.js';
import { CloseCodes, PROTOCOL_VERSION } from '../host-protocol/version.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

function stubSocket(): Socket & { sent: number; ended?: number } {
  const s = {
    sent: 0,
    ended: undefined as number | undefined,
    send: () => (s.sent++, 1),
    getBufferedAmount: () => 0,
    end: (code: number) => {
      s.ended = code;
    },
  };
  return s;
}

test('onHostsUp delivers a burst of hellos as one batch; onHostUp stays per host', async () => {
  const store = new HostStore(t.hub.ctx);
  const ch = new HostChannels(t.hub.ctx, new LocalPresence(), store, { heartbeatTimeoutMs: 60_000, requestTimeoutMs: 1000 });
  const batches: string[][] = [];
  const singles: string[] = [];
  ch.onHostsUp((hosts) => batches.push(hosts.map((h) => h.hostId)));
  ch.onHostUp((id) => singles.push(id));
  const sockets = [];
  for (let i = 0; i < 3; i++) {
    const c = ch.connection({ hostId: `hst_batch${i}`, userId: 'usr_x' });
    const s = stubSocket();
    sockets.push(s);
    c.open(s);
    ch.opened(c);
    c.handle({ t: 'hello', v: PROTOCOL_VERSION, cli: 't', name: 'n', capacity: 1, engines: [], running: i === 0 ? ['run_a'] : [] });
  }
  assert.deepEqual(singles, ['hst_batch0', 'hst_batch1', 'hst_batch2']);
  assert.equal(batches.length, 0, 'the batch waits for the end of the turn');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(batches, [['hst_batch0', 'hst_batch1', 'hst_batch2']]);
  assert.ok(sockets.every((s) => s.sent === 1), 'each got its welcome');
  assert.equal(ch.size, 3);
  assert.equal((await ch.presence('hst_batch0')).running, 1);
  await ch.close();
  await store.close();
  assert.ok(sockets.every((s) => s.ended === 1001), 'closing the gateway says GOING_AWAY');
});

test('a silent host is closed within the heartbeat window of its last frame; one that pings stays', async () => {
  const WINDOW = 1500;
  // The node's clock and its sweep timer run on mocked time: the bounds below judge the gateway's
  // schedule, not how late a loaded machine runs a timer (src/hosts/liveness.ts says why the slack).
  mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.now() });
  const store = new HostStore(t.hub.ctx);
  const ch = new HostChannels(t.hub.ctx, new LocalPresence(), store, { heartbeatTimeoutMs: WINDOW, requestTimeoutMs: 1000 });
  try {
    const endedAt = new Map<string, number>();
    const open = (hostId: string) => {
      const c = ch.connection({ hostId, userId: 'usr_x' });
      const s = stubSocket();
      // Like uWS: ending the socket reports the close at once.
      s.end = (code: number) => {
        s.ended = code;
        endedAt.set(hostId, Date.now());
        c.closed(code);
      };
      c.open(s);
      ch.opened(c);
      c.handle({ t: 'hello', v: PROTOCOL_VERSION, cli: 't', name: 'n', capacity: 1, engines: [], running: [] });
      return { c, s };
    };
    // Said hello between two of the node's sweep ticks, not in step with them.
    mock.timers.tick(WINDOW / 6);
    const lastFrame = Date.now();
    const silent = open('hst_silent');
    const alive = open('hst_alive');
    const beat = setInterval(() => alive.c.handle({ t: 'ping', id: 1 }), ch.heartbeatMs);
    while (silent.s.ended === undefined && Date.now() - lastFrame < WINDOW * 3) mock.timers.tick(1);
    assert.equal(silent.s.ended, CloseCodes.HEARTBEAT.code, 'closed for silence');
    const silence = endedAt.get('hst_silent')! - lastFrame;
    // Judged often enough to close before the window is over (the old sweep, every third of the window, closed up to a third late).
    assert.ok(silence <= WINDOW + 30, `closed ${silence} ms after its last frame; window ${WINDOW} ms`);
    assert.ok(silence >= WINDOW * 0.8, `not long before the window either: ${silence} ms`);
    assert.equal((await ch.presence('hst_silent')).status, 'offline');
    // A millisecond at a time: one long tick runs every due timer at its end instant, pings included.
    for (let ms = 0; ms < WINDOW; ms++) mock.timers.tick(1);
    clearInterval(beat);
    assert.equal(alive.s.ended, undefined, 'a host pinging every heartbeatMs stays open past the window');
    assert.equal((await ch.presence('hst_alive')).status, 'online');
  } finally {
    await ch.close();
    mock.timers.reset();
    await store.close();
  }
});

test('connected: a channel here after hello, or presence naming another node; not this node\'s own stale entry', async () => {
  const presence = new LocalPresence();
  const store = new HostStore(t.hub.ctx);
  const ctxB = Object.assign(Object.create(Object.getPrototypeOf(t.hub.ctx)), t.hub.ctx, { config: { ...t.hub.ctx.config, nodeId: 'node-b' } });
  const a = new HostChannels(t.hub.ctx, presence, store, { heartbeatTimeoutMs: 60_000, requestTimeoutMs: 1000 });
  const b = new HostChannels(ctxB, presence, store, { heartbeatTimeoutMs: 60_000, requestTimeoutMs: 1000 });
  const hello = (ch: HostChannels, hostId: string) => {
    const c = ch.connection({ hostId, userId: 'usr_x' });
    c.open(stubSocket());
    ch.opened(c);
    c.handle({ t: 'hello', v: PROTOCOL_VERSION, cli: 't', name: 'n', capacity: 1, engines: [], running: [] });
    return c;
  };
  hello(a, 'hst_here');
  hello(b, 'hst_there');
  await presence.set('hst_stale', { nodeId: t.hub.ctx.config.nodeId, running: 0, capacity: 1, engines: [], lastSeenAt: Date.now() }, 60_000);
  assert.deepEqual([...(await a.connected(['hst_here', 'hst_there', 'hst_stale', 'hst_none']))].sort(), ['hst_here', 'hst_there']);
  await a.close();
  await b.close();
  await store.close();
});
