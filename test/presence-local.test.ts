// The Presence contract (src/hosts/presence.ts) held by the in-process
// implementation one node runs on: what each write answers, TTLs and who may
// extend or remove an entry, on a mocked clock. The Redis implementation has
// its own in multinode-presence.
import { test, mock, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { LocalPresence, parsedEngines, type PresenceEntry } from '../src/hosts/presence.js';

const T0 = 1_700_000_000_000;
const entry = (nodeId: string | null, over: Partial<PresenceEntry> = {}): PresenceEntry => ({ nodeId, running: 0, capacity: 2, engines: [], lastSeenAt: T0 - 5_000, ...over });

beforeEach(() => mock.timers.enable({ apis: ['Date'], now: T0 }));
afterEach(() => mock.timers.reset());

test('a write answers no previous node for a new host or the same node, and a larger epoch each time, also after a removal', async () => {
  const p = new LocalPresence();
  const first = await p.set('h1', entry('n1'), 10_000);
  assert.deepEqual(first.prev, null);
  const again = await p.set('h1', entry('n1'), 10_000);
  assert.equal(again.prev, null, 'the same node replacing its own entry is no takeover');
  await p.remove('h1', 'n1');
  const after = await p.set('h1', entry('n1'), 10_000);
  const other = await p.set('h2', entry('n1'), 10_000);
  assert.ok(first.epoch > 0 && again.epoch > first.epoch && after.epoch > again.epoch && other.epoch > after.epoch);
});

test('an entry reads absent once its TTL has passed, and not before', async () => {
  const p = new LocalPresence();
  await p.set('h1', entry('n1'), 1_000);
  mock.timers.tick(999);
  assert.equal((await p.get('h1'))?.nodeId, 'n1');
  mock.timers.tick(1);
  assert.equal(await p.get('h1'), undefined);
  assert.equal((await p.getMany(['h1'])).size, 0);
});

test('refresh extends the entries the node holds and no other; nothing is ever restored in process', async () => {
  const p = new LocalPresence();
  await p.set('mine', entry('n1'), 1_000);
  await p.set('theirs', entry('n2'), 1_000);
  await p.setPolled('polled', entry(null), 1_000);
  assert.deepEqual(await p.refresh(['mine', 'theirs', 'polled', 'absent'], 'n1', 5_000), { restored: [], ok: true });
  mock.timers.tick(2_000);
  assert.deepEqual([...(await p.getMany(['mine', 'theirs', 'polled', 'absent'])).keys()], ['mine']);
  // A host that polls is refreshed under the null node (the HTTP heartbeat).
  await p.setPolled('polled', entry(null), 1_000);
  await p.refresh(['polled'], null, 5_000);
  mock.timers.tick(2_000);
  assert.ok(await p.get('polled'));
  await p.refresh(['mine'], 'n1', 100);
  mock.timers.tick(100);
  assert.equal(await p.get('mine'), undefined, 'a shorter TTL shortens it too');
});

test('patch changes a live entry only: an absent or expired host gets no entry', async () => {
  const p = new LocalPresence();
  await p.set('h1', entry('n1'), 1_000);
  await p.patch('h1', { running: 2, capacity: 4 });
  const e = await p.get('h1');
  assert.equal(e?.running, 2);
  assert.equal(e?.capacity, 4);
  assert.equal(e?.nodeId, 'n1', 'fields not patched are kept');
  await p.patch('absent', { running: 1 });
  assert.equal(await p.get('absent'), undefined);
  mock.timers.tick(1_000);
  await p.patch('h1', { running: 1 });
  assert.equal(await p.get('h1'), undefined);
});

test('remove takes the entry away only while the node named holds it', async () => {
  const p = new LocalPresence();
  await p.set('h1', entry('n2'), 10_000);
  await p.remove('h1', 'n1');
  await p.remove('h1', null);
  assert.equal((await p.get('h1'))?.nodeId, 'n2', 'a newer channel elsewhere wins');
  await p.remove('h1', 'n2');
  assert.equal(await p.get('h1'), undefined);
  await p.setPolled('h2', entry(null), 10_000);
  await p.remove('h2', 'n1');
  assert.ok(await p.get('h2'));
  await p.remove('h2', null);
  assert.equal(await p.get('h2'), undefined);
});

test('a polling write never names a node, and never replaces the entry of a channel', async () => {
  const p = new LocalPresence();
  assert.equal(await p.setPolled('h1', entry('n9'), 10_000), true);
  assert.equal((await p.get('h1'))?.nodeId, null, 'a polling host is held by no node');
  assert.equal(await p.setPolled('h1', entry(null, { capacity: 5 }), 10_000), true);
  assert.equal((await p.get('h1'))?.capacity, 5);
  await p.set('h1', entry('n1'), 1_000);
  assert.equal(await p.setPolled('h1', entry(null), 10_000), false);
  assert.equal((await p.get('h1'))?.nodeId, 'n1');
  mock.timers.tick(1_000);
  assert.equal(await p.setPolled('h1', entry(null), 10_000), true, "an expired channel's entry is no channel");
});

test("a held host was last seen now (its node is this live process); a polling host when it last polled", async () => {
  const p = new LocalPresence();
  await p.set('held', entry('n1', { lastSeenAt: T0 - 5_000 }), 10_000);
  await p.setPolled('polled', entry(null, { lastSeenAt: T0 - 5_000 }), 10_000);
  mock.timers.tick(3_000);
  assert.equal((await p.get('held'))?.lastSeenAt, T0 + 3_000);
  assert.equal((await p.get('polled'))?.lastSeenAt, T0 - 5_000);
  const many = await p.getMany(['held', 'polled']);
  assert.equal(many.get('held')?.lastSeenAt, T0 + 3_000);
  assert.equal(many.get('polled')?.lastSeenAt, T0 - 5_000);
});

test('close forgets every entry', async () => {
  const p = new LocalPresence();
  await p.set('h1', entry('n1'), 10_000);
  await p.close();
  assert.equal(await p.get('h1'), undefined);
});

test('an engines field that is not JSON reads as no engines', () => {
  assert.deepEqual(parsedEngines('[{"id":"claude-code","displayName":"Claude Code"}]'), [{ id: 'claude-code', displayName: 'Claude Code' }]);
  assert.deepEqual(parsedEngines('{not json'), []);
});
