// What one session may store (audit, forty-sixth session). A message's content is ≤ 100,000 characters
// (up to 300 KB of UTF-8), but nothing bounds how many messages a session (or an account) holds,
// nor their bytes: plan quotas count sessions per day, hosts and agents only, and the waiting-queue
// limit (10) counts waiting messages only. With its own host ending each run at once with zero usage
// (free runs), one account stores ≈ 300 KB per request: at the general rate limit (600/min per API
// key, 50 keys) that is ≈ 10 GB an hour per key into session_messages, kept for good.
// Now each session counts what it stores (sessions.stored_bytes: its messages and its runs' output) and
// a message that would take it over SESSION_STORED_MAX_BYTES is refused 409, nothing written; what an
// account stores a day is so bounded by its plan's sessions per day.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, endRunsAtOnce, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { ApiError, type AcceptedRun } from '../src/client/index.js';

const EXPECTED_SESSION_BYTES = 8 * 1024 * 1024;
let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub({ sessionStoredMaxBytes: EXPECTED_SESSION_BYTES });
});
after(async () => {
  host?.close();
  await t?.close();
});

test('one session cannot be made to store more than SESSION_STORED_MAX_BYTES', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'free-host');
  host = await connectFakeHost(t, credential, { capacity: 4 });
  // The attacker's own host: every run ends at once, zero usage, so every message is free.
  endRunsAtOnce(host, { inputTokens: 0, outputTokens: 0 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'sink', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const content = '界'.repeat(100_000); // 100,000 characters (the schema's maxLength), 300,000 bytes
  const first = (await c.sessions.create({ agentId: agent.id, content })) as AcceptedRun;
  const sid = first.sessionId;

  let accepted = 1;
  let refused: unknown;
  for (let i = 0; i < 60 && !refused; i++) {
    try {
      await eventually(async () => {
        try {
          await c.sessions.send(sid, { content });
          return true;
        } catch (e) {
          if (e instanceof ApiError && e.status === 409 && /busy|processing/i.test(e.message)) return false; // previous turn still ending
          throw e;
        }
      }, 5000, 5);
      accepted++;
    } catch (e) {
      refused = e;
    }
  }
  const db = t.hub.ctx.em().getConnection();
  const [kept] = await db.execute(`select count(*)::int as rows, coalesce(sum(octet_length(content)), 0)::bigint as n from session_messages where session_id = ? and role = 'user'`, [sid]);
  const stored = Number(kept.n);
  assert.ok(stored <= EXPECTED_SESSION_BYTES,
    `one session stored ${kept.rows} user messages, ${(stored / 1048576).toFixed(1)} MiB (expected ≤ ${EXPECTED_SESSION_BYTES / 1048576} MiB); ${accepted} accepted, refused: ${refused ? String(refused) : 'never'}`);
});

test("a run's output counts toward its session's bound, and a run that takes it over is stopped; a cancelled waiting message gives its bytes back", async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'writer');
  const w = await connectFakeHost(t, credential, { capacity: 1 });
  try {
    const c = t.client(u.key);
    const agent = await agentWhenReady(c, { name: 'writer', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
    const first = (await c.sessions.create({ agentId: agent.id, content: 'write a lot' })) as AcceptedRun;
    const start: any = await w.next((f) => f.t === 'run.start');
    const half = 'y'.repeat(512 * 1024); // a frame's string is at most 1,000,000 bytes
    const db = t.hub.ctx.em().getConnection();
    const storedNow = async () => Number((await db.execute(`select stored_bytes from sessions where id = ?`, [first.sessionId]))[0].stored_bytes);
    const running = async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status === 'running';
    for (let i = 0; i < 18 && (await running()); i++) {
      const was = await storedNow();
      w.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: half }] });
      // Each written mid-run before the next (an embedded database may be slower than the frames).
      await eventually(async () => (await storedNow()) > was || !(await running()), 10_000, 20);
    }
    w.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 0, outputTokens: 0 } });
    await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status !== 'running');
    const [task] = await db.execute(`select status, error_code from session_tasks where id = ?`, [start.runId]);
    assert.deepEqual([task.status, task.error_code], ['failed', 'SESSION_FULL'], 'stopped at the write that took its session over');
    assert.ok(w.frames.some((f) => f.t === 'run.abort'), 'the engine is stopped');
    const [s] = await db.execute(`select stored_bytes from sessions where id = ?`, [first.sessionId]);
    const stored = Number(s.stored_bytes);
    assert.ok(stored > EXPECTED_SESSION_BYTES && stored <= EXPECTED_SESSION_BYTES + 2 * 1024 * 1024, `the run's output is counted, and stopped within a write of the bound: ${stored}`);
    await assert.rejects(c.sessions.send(first.sessionId, { content: 'more' }), (e: unknown) => e instanceof ApiError && e.status === 409 && /new session/.test(e.message));
    // A new session of the same agent is fine.
    const second = (await c.sessions.create({ agentId: agent.id, content: 'hello again' })) as AcceptedRun;
    const run2: any = await w.next((f) => f.t === 'run.start' && (f as any).runId !== start.runId);
    // Its next message waits behind the run; cancelling it takes its bytes back.
    const waiting: any = await c.sessions.send(second.sessionId, { content: 'x'.repeat(1000) });
    assert.equal(waiting.status, 'queued');
    const before = Number((await db.execute(`select stored_bytes from sessions where id = ?`, [second.sessionId]))[0].stored_bytes);
    await c.chat.cancelQueued(second.sessionId, waiting.taskId);
    assert.equal(Number((await db.execute(`select stored_bytes from sessions where id = ?`, [second.sessionId]))[0].stored_bytes), before - 1000);
    w.send({ t: 'run.end', runId: run2.runId, ok: true, usage: { inputTokens: 0, outputTokens: 0 } });
  } finally {
    w.close();
  }
});
