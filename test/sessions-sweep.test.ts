// The lost-run sweep: a run left `running` by a node that died without anyone
// seeing its host disconnect is ended by a surviving node once the host has
// had no presence for the heartbeat window. Needs PostgreSQL (two hubs share
// one database).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import type { SessionView } from '../src/client/index.js';

const skip = process.env.DATABASE_URL ? false : 'needs DATABASE_URL (two hubs share one database)';
let db: { url: string | undefined; drop(): Promise<void> } | undefined;
let b: TestHub | undefined;
before(async () => {
  if (!skip) db = await createTestDatabase();
});
after(async () => {
  await b?.close();
  await db?.drop();
});

test('a run whose host vanished with its node is ended with HOST_DISCONNECTED after the heartbeat window', { skip, timeout: 30_000 }, async () => {
  // Hosts ping every max(1 s, window/3) (the protocol's minimum is 1 s): a window under 3 s reads on-time hosts as silent.
  const WINDOW = 3000;
  const a = await startTestHub({ databaseUrl: db!.url, hostHeartbeatTimeoutMs: WINDOW, nodeId: 'sweep-a' });
  const user = await a.user();
  const { hostId, credential } = await pairHost(a, user.key);
  const host = await connectFakeHost(a, credential, { capacity: 2 });
  const onA = a.client(user.key);
  const agent = await agentWhenReady(onA, { name: 'sweep', scope: 'private', hostId, engine: 'claude-code' });
  const s = ((await onA.sessions.create({ agentId: agent.id })) as SessionView).id; // no content: the 201 session
  const sent = await onA.sessions.send(s, { content: 'long job' });
  assert.equal(sent.status, 'processing');
  await eventually(async () => host.frames.some((f) => f.t === 'run.start'), 5000, 10);

  // Node A goes away while shutting down (it never handles its hosts' disconnects then): the run stays `running`.
  await a.close();
  host.close();
  const conn = () => b!.hub.ctx.em().getConnection();
  b = await startTestHub({ databaseUrl: db!.url, hostHeartbeatTimeoutMs: WINDOW, nodeId: 'sweep-b' });
  const task = async () => (await conn().execute(`select status, error_code, ended_at from session_tasks where id = ?`, [sent.taskId]))[0];
  assert.equal((await task()).status, 'running', 'the dead node left the run running');
  const onB = b.client(user.key);
  assert.equal((await onB.sessions.get(s)).status, 'processing');

  // Not before the host has been absent for the window (as this node saw it)…
  await new Promise((r) => setTimeout(r, WINDOW / 3));
  assert.equal((await task()).status, 'running');
  // …then the survivor ends it, and the session is usable again.
  const ended = await eventually(async () => {
    const t = await task();
    return t.ended_at ? t : undefined;
  }, 10_000, 50);
  assert.equal(ended.status, 'failed');
  assert.equal(ended.error_code, 'HOST_DISCONNECTED');
  const view = await eventually(async () => {
    const v = await onB.sessions.get(s);
    return v.status === 'active' ? v : undefined;
  }, 5000, 20);
  assert.equal(view.status, 'active');
});
