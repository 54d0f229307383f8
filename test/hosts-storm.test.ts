// A reconnect storm (every host of a restarted node coming back at once)
// must cost the database a few lookups, not one per event-loop turn: each
// per-hello lookup has one query in flight and gathers the hellos that come
// meanwhile (src/coalesce.ts). Shown deterministically by holding the hosts
// table locked from another connection while the credentials arrive turn by
// turn; needs PostgreSQL (embedded PGlite has one connection).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { Coalescer } from '../src/coalesce.js';

const turn = () => new Promise((r) => setImmediate(r));

test('Coalescer: one call in flight; what arrives meanwhile goes in the next call, at most max at a time', async () => {
  const calls: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const q = new Coalescer<number>(async (items) => {
    calls.push(items);
    if (calls.length === 1) await gate;
  }, 3);
  q.add(1);
  await turn();
  for (let i = 2; i <= 6; i++) {
    q.add(i);
    await turn(); // each in a turn of its own: without the coalescing, a call each
  }
  assert.deepEqual(calls, [[1]], 'nothing else starts while the first call runs');
  assert.equal(q.pending, 5);
  release();
  for (let i = 0; i < 5; i++) await turn();
  assert.deepEqual(calls, [[1], [2, 3, 4], [5, 6]]);
  // A call that throws does not stop the next.
  const seen: number[] = [];
  const failing = new Coalescer<number>(async (items) => {
    seen.push(...items);
    if (items.includes(1)) throw new Error('boom');
  });
  failing.add(1);
  await turn();
  failing.add(2);
  for (let i = 0; i < 3; i++) await turn();
  assert.deepEqual(seen, [1, 2]);
});

const skip = (await clusterSkipReason({ redis: false })) && 'DATABASE_URL is not set (the lock is held from a second connection; embedded PGlite has one)';
const nodes = useCluster(skip, [{}], { redis: false });
const hosts: FakeHost[] = [];
after(() => hosts.forEach((h) => h.close()));

test('host credentials arriving turn by turn while a lookup is in flight cost one more query, not one each', { skip, timeout: 60_000 }, async () => {
  const [t] = nodes.hubs;
  const u = await t.user();
  const N = 12;
  const creds: string[] = [];
  for (let i = 0; i < N; i++) creds.push((await pairHost(t, u.key, `storm-${i}`)).credential);
  const store = t.hub.hostStore;
  const url = t.hub.ctx.config.databaseUrl!;
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table hosts in access exclusive mode');
    const q0 = store.lookupQueries;
    const first = store.identify(creds[0]);
    // Wait until the first lookup is really waiting on the lock.
    for (let i = 0; i < 200 && store.lookupQueries === q0; i++) await turn();
    const rest: Array<Promise<unknown>> = [];
    for (const c of creds.slice(1)) {
      rest.push(store.identify(c));
      await turn();
    }
    await locker.query('commit');
    const ids = await Promise.all([first, ...rest]);
    assert.ok(ids.every((x) => x && (x as { userId: string }).userId === u.id), 'every credential known');
    assert.equal(store.lookupQueries - q0, 2, 'the first lookup, then one for everything that came while it waited');
  } finally {
    await locker.end();
  }
  // And end to end: the hosts connect (their credentials are now cached).
  for (const c of creds.slice(0, 3)) hosts.push(await connectFakeHost(t, c));
  assert.ok(hosts.every((h) => h.hostId));
});

test('a host reconnecting with the hello its row holds costs no row write; a changed hello is written', { skip, timeout: 60_000 }, async () => {
  const [t] = nodes.hubs;
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'steady');
  const store = t.hub.hostStore;
  const conn = t.hub.ctx.em().getConnection();
  const row = async () => (await conn.execute(`select xmin::text as v, name from hosts where credential_hash is not null and name in ('steady', 'renamed') and user_id = ?`, [u.id]))[0] as { v: string; name: string };
  // Each connect as after a node restart: the credential is not in this node's memory.
  const coldConnect = async (name: string) => {
    (store as unknown as { creds: { clear(): void } }).creds.clear();
    const h = await connectFakeHost(t, credential, { name });
    await store.flush();
    return h;
  };
  const closeAndSettle = async (h: FakeHost) => {
    h.close();
    await h.closed;
    // The hub has heard the close once it no longer holds the host; it recorded the last-seen time then.
    await eventually(async () => (await t.hub.runFrames.gateway.connected([hostId])).size === 0, 5000, 10);
    await store.flush();
  };
  await closeAndSettle(await coldConnect('steady'));
  const before = await row();
  const again = await coldConnect('steady');
  assert.equal((await row()).v, before.v, 'the same hello again: the row is not rewritten');
  await closeAndSettle(again);
  const renamed = await coldConnect('renamed');
  assert.equal((await row()).name, 'renamed', 'a changed hello is written');
  hosts.push(renamed);
});
