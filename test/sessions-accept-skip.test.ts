// An accept batch does not wait for a session another transaction holds
// locked (a run's end, an abort): hub_accept skips it, the message is sent
// again in the next batch (then waiting for the lock), and nothing is lost or
// reordered. Needs PostgreSQL: the lock is held from a second connection.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import type { SessionView } from '../src/client/index.js';

const skip = !process.env.DATABASE_URL && 'DATABASE_URL is not set (a lock held from a second connection)';
let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  if (!skip) t = await startTestHub();
});
after(async () => {
  host?.close();
  await t?.close();
});

test('a message whose session is locked waits alone; the others of its batch go on; order kept', { skip, timeout: 60_000 }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: 4 });
  const starts: string[] = [];
  host.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    if (f?.t === 'run.start') starts.push(f.prompt);
  });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'skip', scope: 'private', hostId, engine: 'claude-code' });
  const a = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;
  const b = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;

  const locker = new pg.Client({ connectionString: t.config.databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query(`select id from sessions where id = $1 for no key update`, [a]);
    let a1Done = false;
    const a1 = c.sessions.send(a, { content: 'a1' }).finally(() => void (a1Done = true));
    // a1 was skipped once and is now written again, waiting for the lock: b1 comes after that, so
    // it can only be answered if a batch never waits behind a lock-waiting message.
    // (pg_stat_activity is read once per transaction unless its snapshot is cleared.)
    await eventually(async () => (await locker.query('select pg_stat_clear_snapshot()'), await locker.query(
      `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%hub_accept%' and datname = current_database()`)).rowCount || undefined, 5000, 10);
    const bAnswer = await Promise.race([
      c.sessions.send(b, { content: 'b1' }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('b1 waited behind a\'s lock')), 5000).unref()),
    ]);
    assert.equal(bAnswer.status, 'processing');
    const a2 = c.sessions.send(a, { content: 'a2' });
    await eventually(async () => starts.includes('b1') || undefined, 5000, 10);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(a1Done, false, 'a1 waits for its session\'s lock');
    await locker.query('commit');
    const [r1, r2] = await Promise.all([a1, a2]);
    assert.equal(r1.status, 'processing', 'a1 first');
    assert.equal(r2.status, 'queued', 'a2 behind it');
    assert.equal(r2.queueReason, 'session_busy');
    await eventually(async () => starts.includes('a1') || undefined, 5000, 10);
    assert.deepEqual(starts, ['b1', 'a1']);
    const rows = await locker.query(`select m.content, m.seq from session_messages m where m.session_id = $1 order by m.seq`, [a]);
    assert.deepEqual(rows.rows.map((r) => r.content), ['a1', 'a2'], 'stored once each, in the order sent');
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
});
