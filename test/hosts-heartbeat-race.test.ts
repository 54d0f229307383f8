// An HTTP heartbeat read the host's presence, found no channel, and wrote a polling entry (no node)
// — if the host's WebSocket hello landed between that read and that write, the write replaced the
// channel's entry: the host read as one that only polls (requests 409, runs not routed to it) until
// the entry expired, though a node held its channel. A polling write now never replaces the entry of
// a channel a live node holds (decided where it is written, in one step).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost } from './helpers/host.js';
import { LocalPresence, type Presence } from '../src/hosts/presence.js';
import { RedisPresence } from '../src/hosts/presence-redis.js';
import { Redis } from 'ioredis';
import { testPrefix } from './helpers/redis.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const entry = (nodeId: string | null) => ({ nodeId, running: 0, capacity: 1, engines: [], lastSeenAt: Date.now() });

test('a heartbeat that read no channel before the hello wrote one leaves the channel\'s entry alone', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity: 2 });
  try {
    const presence = (t.hub.runFrames.gateway as unknown as { presenceStore: Presence }).presenceStore;
    const held = (await presence.get(hostId))?.nodeId;
    assert.ok(held, 'the channel is held by a node');
    // The race: the heartbeat's read happened before the hello's write.
    const get = presence.get.bind(presence);
    let once = true;
    presence.get = async (id: string) => (id === hostId && once ? ((once = false), undefined) : get(id));
    const hb = await t.api('POST', '/api/v1/hosts/heartbeat', { token: credential, body: { capacity: 3 } });
    presence.get = get;
    assert.equal(hb.status, 200);
    assert.equal((await presence.get(hostId))?.nodeId, held, "the channel's entry stays its node's");
    assert.equal((await t.api('GET', `/api/v1/hosts/${hostId}`, { token: u.key })).body.data.capacity, 2, "the channel's capacity, not the heartbeat's");
  } finally {
    host.close();
  }
});

test('LocalPresence: a polling write replaces a polling entry or none, never a channel\'s', async () => {
  const p = new LocalPresence();
  assert.equal(await p.setPolled('h1', entry(null), 10_000), true);
  await p.set('h1', entry('n1'), 10_000);
  assert.equal(await p.setPolled('h1', entry(null), 10_000), false);
  assert.equal((await p.get('h1'))?.nodeId, 'n1');
});

test('RedisPresence: the same, and an entry of a dead node is replaced', { skip: process.env.REDIS_URL ? undefined : 'REDIS_URL not set' }, async () => {
  const redis = new Redis(process.env.REDIS_URL!);
  const prefix = testPrefix();
  const live = new RedisPresence(redis, (k) => `${prefix}${k}`, 'n1');
  const dead = new RedisPresence(redis, (k) => `${prefix}${k}`, 'n2');
  try {
    await live.set('h1', entry('n1'), 10_000);
    assert.equal(await live.setPolled('h1', entry(null), 10_000), false);
    assert.equal((await live.get('h1'))?.nodeId, 'n1');
    await dead.set('h2', entry('n2'), 10_000);
    await dead.close(); // its liveness key goes: its entries read offline
    assert.equal(await live.setPolled('h2', entry(null), 10_000), true);
    assert.equal((await live.get('h2'))?.nodeId, null);
    assert.equal(await live.setPolled('h3', entry(null), 10_000), true);
    assert.equal(await live.setPolled('h3', entry(null), 10_000), true, 'a polling entry is replaced by the next poll');
  } finally {
    await live.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
});
