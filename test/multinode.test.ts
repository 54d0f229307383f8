// Two hub PROCESSES on one PostgreSQL database and one Redis, a real
// agent-host behind a small TCP balancer (so a reconnect can land on the
// other node, as behind nginx), the fake `claude`. Sessions are created,
// messaged, aborted and streamed over SSE through node B while the host's
// channel is on node A; then node A is SIGKILLed mid-run: the host reconnects
// to B, the running turn ends with run.error, the queued messages run, and
// no accepted message is lost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, mkdirSync, rmSync, readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase } from './helpers/hub.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { startNode, startBalancer, call, type HubNode } from './helpers/nodes.js';
import { spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';
import { openSse } from './helpers/sse.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hub processes need one shared PostgreSQL)' : undefined;

const FAKE_CLAUDE = resolve(import.meta.dirname, 'fixtures/fake-claude.mjs');
let A: HubNode;
let B: HubNode;
let lb: { url: string; close(): Promise<void> };
let host: AgentHostProcess;
let drop: (() => Promise<void>) | undefined;
let dbUrl: string;
/** One statement on the nodes' shared database, on a connection of its own. */
async function sql(text: string, params: unknown[]): Promise<any[]> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}
let tmp: string;
const adminKey = 'ahk_' + randomBytes(20).toString('hex');

before(async () => {
  if (skip) return;
  const db = await createTestDatabase();
  drop = db.drop;
  dbUrl = db.url!; // set: skipped above without DATABASE_URL
  tmp = mkdtempSync(join(tmpdir(), 'multinode-'));
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: (redis as { url: string }).url,
    REDIS_PREFIX: testPrefix(),
    SECRET_KEY: 'multinode-' + randomBytes(16).toString('hex'),
    ADMIN_API_KEY: adminKey,
    HOST_HEARTBEAT_TIMEOUT_MS: '3000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
  // One after the other: the first applies the migrations.
  A = await startNode('node-a', env);
  B = await startNode('node-b', env);
  lb = await startBalancer([A.port, B.port]);
});

after(async () => {
  host?.kill('SIGKILL');
  A?.kill('SIGKILL');
  B?.kill('SIGKILL');
  await lb?.close();
  await Promise.all([A?.exited, B?.exited, host?.wait()].filter(Boolean));
  await drop?.();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('sessions through node B with the host on node A; node A killed mid-run', { skip, timeout: 120_000 }, async () => {
  try {
    await scenario();
  } catch (e) {
    // The processes' own words make a failure here readable.
    try {
      console.error(`--- engine starts ---\n${readFileSync(join(tmp, 'claude.log'), 'utf8')}\n--- ps ---\n${execSync('ps -eo pid,etimes,args | grep fake-claude | grep -v grep || true', { encoding: 'utf8' })}`);
    } catch {
      /* no engine ran */
    }
    console.error(`--- node A ---\n${A.output()}\n--- node B ---\n${B.output()}\n--- agent-host ---\n${host?.output()}`);
    throw e;
  }
});

async function scenario() {
  const u = await call(A.url, 'POST', '/api/v1/admin/users', { token: adminKey, body: { name: 'multi' } });
  assert.equal(u.status, 201, u.text);
  const key: string = u.body.data.apiKey;

  // The host pairs and connects through the balancer: it lands on node A.
  const pk = await call(A.url, 'POST', '/api/v1/hosts/pair-key', { token: key });
  const root = join(tmp, 'work');
  mkdirSync(join(root, 'proj'), { recursive: true });
  host = spawnAgentHost(['run', '--hub', lb.url, '--pair-key', pk.body.data.pairKey, '--name', 'multi-box', '--work-root', root, '--capacity', '1'], {
    AGENT_HOST_HOME: join(tmp, 'home'),
    CLAUDE_BIN: FAKE_CLAUDE,
    CLAUDE_CONFIG_DIR: join(tmp, 'claude'),
    FAKE_CLAUDE_LOG: join(tmp, 'claude.log'),
  });
  const hostId = (await host.waitFor(/connected to \S+ as hst_\w+/, 30_000)).match(/hst_\w+/)![0];

  // Everything below goes through node B.
  const agent = await eventually(async () => {
    const r = await call(B.url, 'POST', '/api/v1/agents', { token: key, body: { name: 'multi', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' } });
    return r.status === 201 ? r.body.data : undefined;
  }, 10_000, 100);
  const hostView = await call(B.url, 'GET', `/api/v1/hosts/${hostId}`, { token: key });
  assert.equal(hostView.body.data.status, 'online', 'node B sees the host held by node A');

  // 1. A session with its first message, streamed over SSE from node B.
  const sse = await openSse(`${B.url}/api/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: agent.id, content: 'first [deltas:3]' }),
  });
  assert.equal(sse.status, 200, sse.text);
  const done = await sse.until((f) => f.event === 'run.completed' || f.event === 'run.error', 30_000);
  assert.equal(done.event, 'run.completed');
  assert.ok(sse.frames.some((f) => f.event === 'message.delta'), 'deltas crossed from node A to node B');
  const sessionId: string = done.data.sessionId;
  sse.close();

  // 2. Abort through node B.
  const slow = await call(B.url, 'POST', `/api/v1/sessions/${sessionId}/messages`, { token: key, body: { content: 'to abort [sleep:20000]' } });
  assert.equal(slow.status, 202, slow.text);
  await eventually(async () => (await call(B.url, 'GET', `/api/v1/sessions/${sessionId}`, { token: key })).body.data.processing === true, 10_000, 50);
  await new Promise((r) => setTimeout(r, 500)); // let the engine start on the host
  const ab = await call(B.url, 'POST', `/api/v1/sessions/${sessionId}/abort`, { token: key });
  assert.equal(ab.status, 200, ab.text);
  assert.deepEqual(ab.body.data, { sessionId, status: 'aborted' });
  await eventually(async () => (await call(B.url, 'GET', `/api/v1/sessions/${sessionId}`, { token: key })).body.data.processing === false, 15_000, 100);
  // The aborted run keeps its slot of the host's capacity (1) until the host reports its engine gone: a
  // message sent before that waits as host_capacity (202), by design (a red CI run raced it). Wait for
  // agent-host's run.end, then for the hub to have written it.
  await host.waitFor(new RegExp(`run ${slow.body.taskId} aborted`), 15_000); // a 202 answers its body bare (the spec)
  // Written when the slot is free again: the engine's stop no longer held (engine_until cleared), read from the database.
  await eventually(async () => (await sql(`select engine_until is null as free from session_tasks where id = $1`, [slow.body.taskId]))[0]?.free === true || undefined, 15_000, 50);

  // 3. A long turn streamed from B, two more messages queued behind it, then node A dies.
  const long = await openSse(`${B.url}/api/v1/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ content: 'long turn [sleep:30000]' }),
  });
  assert.equal(long.status, 200, long.text);
  const first = await long.until((f) => f.event === 'message.delta' || f.event === 'run.error', 15_000);
  assert.equal(first.event, 'message.delta', JSON.stringify(long.frames));
  const queued: string[] = [];
  for (const content of ['queued one', 'queued two']) {
    const q = await call(B.url, 'POST', `/api/v1/sessions/${sessionId}/messages`, { token: key, body: { content } });
    assert.equal(q.status, 202, q.text);
    assert.equal(q.body.status, 'queued');
    queued.push(q.body.taskId);
  }

  const killedAt = Date.now();
  A.kill('SIGKILL');
  assert.equal(await A.exited, 'SIGKILL');

  // The host reconnects through the balancer, now to node B.
  await eventually(async () => (host.output().match(/connected to /g) ?? []).length >= 2, 20_000, 100);
  const err = await long.until((f) => f.event === 'run.error', 20_000);
  assert.equal(err.data.sessionId, sessionId);
  assert.ok(Date.now() - killedAt < 20_000);

  // The queued messages run on the host, now through node B, in order.
  const history = await eventually(async () => {
    const r = await call(B.url, 'GET', `/api/v1/sessions/${sessionId}/messages?limit=50`, { token: key });
    const items: any[] = r.body.data.items;
    const text = JSON.stringify(items);
    return text.includes('echo: queued one') && text.includes('echo: queued two') ? items : undefined;
  }, 30_000, 200);

  // No accepted message is lost: every user message is in the history once.
  const userTexts = history.filter((m) => m.role === 'user').map((m) => m.content);
  for (const c of ['first [deltas:3]', 'to abort [sleep:20000]', 'long turn [sleep:30000]', 'queued one', 'queued two']) {
    assert.equal(userTexts.filter((t) => t === c).length, 1, `user message ${JSON.stringify(c)} in ${JSON.stringify(userTexts)}`);
  }
  // The last reply's text is stored a moment before its run's end commits: wait for the session to settle.
  const s = await eventually(async () => {
    const r = await call(B.url, 'GET', `/api/v1/sessions/${sessionId}`, { token: key });
    return r.body.data.processing === false ? r : undefined;
  }, 10_000, 100);
  assert.equal(s.body.data.processing, false);
  assert.equal(s.body.data.pendingRuns, 0);
  long.close();
}
