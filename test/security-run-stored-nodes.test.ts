// Review (forty-sixth session): RUN_STORED_MAX_BYTES was counted in the memory of the node that received
// a run's frames (RunState.storedBytes): a host that reconnected to another node (its hello listing the run
// as running) had the run adopted there from 0, so the bound started over on each node. A node adopting a
// run now reads what the run has stored (storedByRun).
// Audit by mutation (fifty-second session): the bound on the frames a node holds while it loads such a run
// (RUN_BACKLOG_MAX_BYTES) had no test; the second test holds B's load and pours past it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import type { AcceptedRun } from '../src/client/index.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set' : undefined;
const RUN_MAX = 512 * 1024;
let A: TestHub;
let B: TestHub;
before(async () => {
  if (skip) return;
  const shared = { redisUrl: (redis as { url: string }).url, redisPrefix: testPrefix(), runStoredMaxBytes: RUN_MAX, runOutputMaxBytes: 64 * 1024, sessionStoredMaxBytes: 0 };
  A = await startTestHub({ ...shared, nodeId: 'node-a' });
  B = await startTestHub({ ...shared, nodeId: 'node-b', databaseUrl: A.config.databaseUrl });
});
after(async () => {
  await B?.close();
  await A?.close();
});

test('a run cannot store more than RUN_STORED_MAX_BYTES by moving its host to another node', { skip }, async () => {
  const u = await A.user();
  const { hostId, credential } = await pairHost(A, u.key, 'roamer');
  const onA = await connectFakeHost(A, credential, { capacity: 1 });
  const c = A.client(u.key);
  const agent = await agentWhenReady(c, { name: 'sink', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const first = (await c.sessions.create({ agentId: agent.id, content: 'go' })) as AcceptedRun;
  const start: any = await onA.next((f) => f.t === 'run.start');
  const chunk = 'z'.repeat(60 * 1024);
  const pour = async (h: typeof onA) => {
    for (let i = 0; i < 8; i++) { // 8 × 60 KiB = 480 KiB < RUN_STORED_MAX_BYTES on its own
      h.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: chunk }] });
      await new Promise((r) => setTimeout(r, 60));
    }
  };
  await pour(onA);
  // The host opens its new channel on B, then drops the one on A (A sees the host back: the run goes on).
  const onB = await connectFakeHost(B, credential, { capacity: 1, running: [start.runId] });
  onA.close();
  await onA.closed;
  try {
    await pour(onB);
    onB.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 0, outputTokens: 0 } });
    const db = A.hub.ctx.em().getConnection();
    await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status !== 'running', 10_000);
    const [task] = await db.execute(`select status, error_code from session_tasks where id = ?`, [start.runId]);
    assert.deepEqual([task.status, task.error_code], ['failed', 'OUTPUT_TOO_LARGE'], 'stopped on B for what it stored on A and B together');
    const [kept] = await db.execute(`select coalesce(sum(octet_length(content)), 0)::bigint as n from session_messages where task_id = ? and role = 'assistant'`, [start.runId]);
    const stored = Number(kept.n);
    assert.ok(stored <= RUN_MAX,
      `one run stored ${(stored / 1024).toFixed(0)} KiB (RUN_STORED_MAX_BYTES ${RUN_MAX / 1024} KiB), ended ${task.status}/${task.error_code ?? '-'} (session ${first.sessionId})`);
  } finally {
    onB.close();
  }
});

test('frames held while a node loads a run it did not start are bounded: past the bound the run is stopped, nothing held is stored', { skip }, async () => {
  const BACKLOG = 256 * 1024;
  const u = await A.user();
  const { hostId, credential } = await pairHost(A, u.key, 'roamer-2');
  const onA = await connectFakeHost(A, credential, { capacity: 1 });
  const c = A.client(u.key);
  const agent = await agentWhenReady(c, { name: 'sink-2', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  await c.sessions.create({ agentId: agent.id, content: 'go' });
  const start: any = await onA.next((f) => f.t === 'run.start');
  // B's load of the run (its row) waits until the host has poured more than the bound.
  const runs = B.hub.runFrames.runs as unknown as { adopt: (st: unknown) => Promise<void>; limits: { runBacklogBytes: number } };
  const adopt = runs.adopt;
  const bound = runs.limits.runBacklogBytes;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  runs.limits.runBacklogBytes = BACKLOG;
  runs.adopt = async (st) => {
    await gate;
    return adopt.call(runs, st);
  };
  const onB = await connectFakeHost(B, credential, { capacity: 1, running: [start.runId] });
  onA.close();
  await onA.closed;
  try {
    const chunk = 'q'.repeat(60 * 1024);
    for (let i = 0; i < 8; i++) onB.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: chunk }] }); // 480 KiB
    await onB.ping(); // B has read them all: they wait for the load
    release();
    const abort: any = await onB.next((f) => f.t === 'run.abort', 10_000);
    assert.equal(abort.runId, start.runId, 'B stops the run on its host');
    const db = A.hub.ctx.em().getConnection();
    await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status !== 'running', 10_000);
    const [task] = await db.execute(`select status, error_code from session_tasks where id = ?`, [start.runId]);
    assert.deepEqual([task.status, task.error_code], ['failed', 'OUTPUT_TOO_LARGE']);
    const [kept] = await db.execute(`select count(*)::int as n from session_messages where task_id = ? and role = 'assistant'`, [start.runId]);
    assert.equal(kept.n, 0, 'what was held past the bound is dropped, not stored');
  } finally {
    release();
    runs.adopt = adopt;
    runs.limits.runBacklogBytes = bound;
    onB.close();
  }
});

// The gateway passes on only the frames of runs bound to the sending channel; behind it (called here directly), a node adopting a run
// it did not start reads the run's row and takes frames only from the host that row names (sessions/runs.ts adopt).
test('a node does not adopt a run it did not start from a host other than the one its row names', { skip }, async () => {
  const u = await A.user();
  const other = await A.user();
  const own = await pairHost(A, u.key, 'own');
  const foreign = await pairHost(A, other.key, 'foreign');
  const onA = await connectFakeHost(A, own.credential, { capacity: 1 });
  const c = A.client(u.key);
  const agent = await agentWhenReady(c, { name: 'adopted', hostId: own.hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const run = (await c.sessions.create({ agentId: agent.id, content: 'go' })) as AcceptedRun;
  const start: any = await onA.next((f) => f.t === 'run.start');
  const db = A.hub.ctx.em().getConnection();
  const status = async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status;
  try {
    B.hub.runFrames.runs.handle(foreign.hostId, { t: 'run.end', runId: start.runId, ok: false, error: { code: 'X', message: 'forged' } });
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(await status(), 'running', 'another host\'s end of the run is dropped');
    onA.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await eventually(async () => (await status()) === 'completed' || undefined, 10_000, 25);
    assert.equal((await c.sessions.get(run.sessionId)).status, 'active');
    // B remembers the run as closed, for its own host only: another host's late end records no usage.
    B.hub.runFrames.runs.handle(foreign.hostId, { t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 999, outputTokens: 999 } });
    await new Promise((r) => setTimeout(r, 600));
    const used = (await db.execute(`select input_tokens, output_tokens from session_tasks where id = ?`, [start.runId]))[0];
    assert.deepEqual([Number(used.input_tokens), Number(used.output_tokens)], [1, 1]);
  } finally {
    onA.close();
  }
});
