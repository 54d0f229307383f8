// A run sent across nodes (client on node B, the host's channel on node A)
// is tracked by the node that holds the channel, from its run.start on: A
// knows the run without reading it back from the database when its frames
// arrive, and B, which only sent it, keeps no state for it (before, B kept
// one per run forever: the run's end is written on A, so B's never closed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import type { FrameOf, HubToHost } from '../host-protocol/frames.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;

let a: TestHub;
let b: TestHub;
let fh: FakeHost | undefined;
let drop: (() => Promise<void>) | undefined;
let dbUrl: string | undefined;

before(async () => {
  if (skip) return;
  const db = await createTestDatabase();
  drop = db.drop;
  dbUrl = db.url;
  const shared = { databaseUrl: db.url, redisUrl, redisPrefix: testPrefix(), hostHeartbeatTimeoutMs: 60_000 };
  a = await startTestHub({ ...shared, nodeId: 'node-a' });
  b = await startTestHub({ ...shared, nodeId: 'node-b', adminApiKey: a.adminKey });
});

after(async () => {
  fh?.close();
  await a?.close();
  await b?.close();
  await drop?.();
});

test('a run sent through node B is tracked on node A, which holds the channel, and on A only', { skip }, async () => {
  const u = await a.user();
  const { hostId, credential } = await pairHost(a, u.key);
  fh = await connectFakeHost(a, credential, { capacity: 5 });
  await eventually(async () => (await b.hub.runFrames.gateway.entries([hostId])).get(hostId)?.nodeId === 'node-a', 5000, 20);
  const agent = await eventually(async () => {
    const r = await b.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'across', scope: 'private', hostId, engine: 'claude-code' } });
    return r.status === 201 ? r.body.data : undefined;
  });
  const s = await b.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId: agent.id } });
  assert.equal(s.status, 201, s.text);
  const sessionId: string = s.body.data.id;
  const loadsA = a.hub.runFrames.runs.loads;
  const runs = 4;
  for (let i = 0; i < runs; i++) {
    const m = await b.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: `hello ${i}` } });
    assert.equal(m.status, 202, m.text);
    const start = await fh.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start' && f.sessionId === sessionId && f.prompt === `hello ${i}`);
    fh.send({ t: 'run.delta', runId: start.runId, text: `answer ${i}` });
    fh.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: `answer ${i}` }] });
    fh.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => {
      const r = await b.api('GET', `/api/v1/sessions/${sessionId}`, { token: u.key });
      return r.body.data.status === 'active' ? true : undefined; // the run's end is written
    }, 5000, 20);
  }
  const history = await b.api('GET', `/api/v1/sessions/${sessionId}/messages?limit=50`, { token: u.key });
  const texts = JSON.stringify(history.body);
  for (let i = 0; i < runs; i++) assert.ok(texts.includes(`answer ${i}`), `run ${i}'s answer is in the history`);
  assert.equal(a.hub.runFrames.runs.loads - loadsA, 0, 'node A knew every run from its run.start: no read back per run');
  assert.equal(b.hub.runFrames.runs.running, 0, 'node B keeps no open state for runs whose channel is elsewhere');
});

test('a run aborted through node B keeps the usage its host reports afterwards on node A, and is charged for it', { skip }, async () => {
  const u = await a.user();
  const { hostId, credential } = await pairHost(a, u.key);
  const host = await connectFakeHost(a, credential, { capacity: 5 });
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    await eventually(async () => (await b.hub.runFrames.gateway.entries([hostId])).get(hostId)?.nodeId === 'node-a', 5000, 20);
    const agent = await eventually(async () => {
      const r = await b.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'aborted', scope: 'private', hostId, engine: 'claude-code' } });
      return r.status === 201 ? r.body.data : undefined;
    });
    const s = await b.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId: agent.id } });
    const sessionId: string = s.body.data.id;
    const balance = async () => Number((await db.query('select balance from users where id = $1', [u.id])).rows[0].balance);
    const m = await b.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: 'long job' } });
    assert.equal(m.status, 202, m.text);
    const start = await host.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start' && f.sessionId === sessionId);
    host.send({ t: 'run.delta', runId: start.runId, text: 'working' });
    await eventually(async () => a.hub.runFrames.runs.isLocal(start.runId) || undefined, 5000, 10);
    const before = await balance();
    const ab = await b.api('POST', `/api/v1/sessions/${sessionId}/abort`, { token: u.key });
    assert.equal(ab.status, 200, ab.text);
    await host.next((f) => f.t === 'run.abort' && f.runId === start.runId);
    await eventually(async () => (await db.query('select ended_at from session_tasks where id = $1', [start.runId])).rows[0].ended_at !== null || undefined, 5000, 20);
    // The engine stopped; its end reports what the turn used before the abort.
    host.send({ t: 'run.end', runId: start.runId, ok: false, usage: { inputTokens: 300, outputTokens: 100 } });
    const task = await eventually(async () => {
      const r = (await db.query('select status, input_tokens, output_tokens from session_tasks where id = $1', [start.runId])).rows[0];
      return Number(r.input_tokens) === 300 ? r : undefined;
    }, 5000, 20);
    assert.equal(task.status, 'aborted');
    assert.equal(Number(task.output_tokens), 100);
    assert.equal(before - (await balance()), 300 + 100 * 2, 'the usage reported after the abort is charged');
    await eventually(async () => (a.hub.runFrames.runs.running === 0 && b.hub.runFrames.runs.running === 0) || undefined, 5000, 20);
  } finally {
    host.close();
    await db.end();
  }
});
