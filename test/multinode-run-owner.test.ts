// A run sent across nodes (client on node B, the host's channel on node A)
// is tracked by the node that holds the channel, from its run.start on: A
// knows the run without reading it back from the database when its frames
// arrive, and B, which only sent it, keeps no state for it (before, B kept
// one per run forever: the run's end is written on A, so B's never closed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

before(async () => {
  if (skip) return;
  const db = await createTestDatabase();
  drop = db.drop;
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
