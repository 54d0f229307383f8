// An agent's engine is checked against what its host reports now: the engines
// of a connected host's hello or `engines` frame count at once, although the
// hosts table learns them in a batched write that may land after the hub has
// answered the host (the hosts list and the console's host picker already show
// the live ones). A host that is offline is judged by what it reported last.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const CODEX = { id: 'codex', displayName: 'Codex' };

test('the hosts table slow to take the hello (its row locked): the engine of the hello still counts', { skip: process.env.DATABASE_URL ? false : 'needs a second database connection to hold the row (PostgreSQL)' }, async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const holder = new pg.Client({ connectionString: t.config.databaseUrl });
  await holder.connect();
  try {
    // The hello's row update waits for this lock; an agent's reference to the host (a key share) does not.
    await holder.query('begin');
    await holder.query('select id from hosts where id = $1 for no key update', [hostId]);
    const host = await connectFakeHost(t, credential, { engines: [CODEX] });
    const a = await c.agents.create({ name: 'row-held', hostId, engine: 'codex', workDir: 'proj' });
    assert.equal(a.engine, 'codex');
    await assert.rejects(c.agents.create({ name: 'nope', hostId, engine: 'claude-code', workDir: 'proj' }), apiError(400));
    await holder.query('commit');
    host.close();
  } finally {
    await holder.end().catch(() => undefined);
  }
});

test('a host just connected: an agent on the engine of its hello is created at once', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { engines: [CODEX] });
  const a = await c.agents.create({ name: 'at-once', hostId, engine: 'codex', workDir: 'proj' });
  assert.equal(a.engine, 'codex');
  // An engine the host does not report is still refused.
  await assert.rejects(c.agents.create({ name: 'nope', hostId, engine: 'claude-code', workDir: 'proj' }), apiError(400));
  host.close();
});

test('an engine reported by an `engines` frame counts as soon as the hub has read it; offline, the last report counts', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential);
  await assert.rejects(c.agents.create({ name: 'early', hostId, engine: 'codex', workDir: 'proj' }), apiError(400));
  host.send({ t: 'engines', engines: [CODEX] });
  await host.ping(); // the hub reads a channel's frames in order: the engines frame is read
  const a = await c.agents.create({ name: 'new-engine', hostId, engine: 'codex', workDir: 'proj' });
  assert.equal(a.engine, 'codex');
  await assert.rejects(c.agents.update(a.id, { engine: 'claude-code' }), apiError(400), 'no longer reported');
  host.close();
  await eventually(async () => (await c.hosts.get(hostId)).status === 'offline' || undefined, 10_000, 20);
  // Offline: the stored report (written by the batch meanwhile) decides.
  await eventually(async () => (await c.agents.create({ name: 'offline', hostId, engine: 'codex', workDir: 'proj' })).engine === 'codex' || undefined, 10_000, 50);
  await assert.rejects(c.agents.create({ name: 'offline-2', hostId, engine: 'claude-code', workDir: 'proj' }), apiError(400));
});
