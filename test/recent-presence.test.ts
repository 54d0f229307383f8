// A send's reading of a host held by another node is kept for a moment, only
// while online, within a bound; then it is read again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecentPresence } from '../src/hosts/recent-presence.js';

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

test('a reading of a host online on another node is kept for its window, then read again', () => {
  const c = clock();
  const r = new RecentPresence(() => 1000, 10, c.now);
  r.keep('h1', { status: 'online', capacity: 3, nodeId: 'node-a' });
  const got = r.get('h1');
  assert.deepEqual([got?.status, got?.capacity, got?.nodeId], ['online', 3, 'node-a']);
  c.advance(999);
  assert.equal(r.get('h1')?.nodeId, 'node-a');
  c.advance(1);
  assert.equal(r.get('h1'), undefined, 'expired at its window');
  assert.equal(r.size, 0, 'an expired reading is dropped when read');
});

test('offline readings, readings without a node and a zero window are never kept', () => {
  const c = clock();
  const r = new RecentPresence(() => 1000, 10, c.now);
  r.keep('off', { status: 'offline', capacity: 0 });
  r.keep('http', { status: 'online', capacity: 1 });
  assert.equal(r.get('off'), undefined);
  assert.equal(r.get('http'), undefined);
  let ttl = 0;
  const z = new RecentPresence(() => ttl, 10, c.now);
  z.keep('h', { status: 'online', capacity: 1, nodeId: 'n' });
  assert.equal(z.get('h'), undefined);
  ttl = 50; // a changed window applies at once, to the readings kept already too
  z.keep('h', { status: 'busy', capacity: 1, nodeId: 'n' });
  assert.equal(z.get('h')?.status, 'busy');
  c.advance(20);
  ttl = 10;
  assert.equal(z.get('h'), undefined);
});

test('bounded: the oldest reading goes first; a reading kept again counts as new; forget drops one', () => {
  const c = clock();
  const r = new RecentPresence(() => 1000, 3, c.now);
  for (const h of ['a', 'b', 'c']) r.keep(h, { status: 'online', capacity: 1, nodeId: 'n' });
  r.keep('a', { status: 'online', capacity: 2, nodeId: 'n' }); // now the newest
  r.keep('d', { status: 'online', capacity: 1, nodeId: 'n' });
  assert.equal(r.size, 3);
  assert.equal(r.get('b'), undefined, 'the oldest went');
  assert.equal(r.get('a')?.capacity, 2);
  r.forget('a');
  assert.equal(r.get('a'), undefined);
  assert.deepEqual(['c', 'd'].map((h) => r.get(h)?.nodeId), ['n', 'n']);
});

test('a send\'s reading: another node\'s host is kept; one naming this node (its channel closed, the entry not yet removed) reads offline and is not kept', async () => {
  const { HostRouting } = await import('../src/hosts/routing.js');
  const { LocalBus } = await import('../src/bus/local.js');
  const readings: Record<string, { nodeId?: string }> = { elsewhere: { nodeId: 'node-a' }, here: { nodeId: 'node-b' } };
  let reads = 0;
  const routing = new HostRouting({
    bus: new LocalBus(), node: 'node-b', presenceStore: undefined as never,
    read: async (hostId) => (reads++, { hostId, status: 'online', running: 0, capacity: 2, engines: [], lastSeenAt: 0, ...readings[hostId] }),
    reuseMs: () => 60_000, here: () => {}, offline: () => {}, undelivered: () => {}, closing: () => false,
  });
  assert.deepEqual(await routing.forSend('here'), { status: 'offline', capacity: 0 });
  assert.equal(routing.recent.get('here'), undefined);
  assert.equal((await routing.forSend('elsewhere')).nodeId, 'node-a');
  assert.equal((await routing.forSend('elsewhere')).nodeId, 'node-a');
  assert.equal(reads, 2, 'the second send for the host on node A used the kept reading');
});
