// Review (forty-sixth session): SESSION_STORED_MAX_BYTES is checked only when a message is accepted (hub_accept). Messages
// accepted while the session's first run is still going (they wait: session_busy) each start a run
// later, when the session is already past its bound, and each run may store RUN_STORED_MAX_BYTES.
// Now each mid-run write reads the session's total: the run whose write takes it over is stopped
// (SESSION_FULL), and the runs of its waiting messages are refused at dispatch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

const SESSION_MAX = 1024 * 1024;
const RUN_MAX = 512 * 1024;
let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub({ sessionStoredMaxBytes: SESSION_MAX, runStoredMaxBytes: RUN_MAX, runOutputMaxBytes: 64 * 1024 });
});
after(async () => {
  host?.close();
  await t?.close();
});

test('messages queued behind a run cannot take a session past SESSION_STORED_MAX_BYTES by more than one run', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'own-host');
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const h = host;
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'sink', hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const first = (await c.sessions.create({ agentId: agent.id, content: 'go' })) as AcceptedRun;
  const sid = first.sessionId;
  await h.next((f) => f.t === 'run.start');
  // While the first run goes, the session is nearly empty: ten more messages are accepted (they wait).
  for (let i = 0; i < 10; i++) {
    const r: any = await c.sessions.send(sid, { content: 'more ' + i });
    assert.equal(r.status, 'queued');
  }
  const chunk = 'z'.repeat(60 * 1024); // under the held bound (64 KiB) each
  const db0 = t.hub.ctx.em().getConnection();
  const storedNow = async () => Number((await db0.execute(`select stored_bytes from sessions where id = ?`, [sid]))[0].stored_bytes);
  const running = async (id: string) => (await db0.execute(`select status from session_tasks where id = ?`, [id]))[0].status === 'running';
  const seen = new Set<string>();
  for (let run = 0; run < 11; run++) {
    // Once a write finds the session over its bound, the waiting messages' runs are refused: no run.start.
    const start: any = await h.next((f) => f.t === 'run.start' && !seen.has((f as any).runId), 3_000).catch(() => undefined);
    if (!start) break;
    seen.add(start.runId);
    for (let i = 0; i < 7 && (await running(start.runId)); i++) { // 7 × 60 KiB ≈ 420 KiB < RUN_STORED_MAX_BYTES: each run is within its own bound
      const was = await storedNow();
      h.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: chunk }] });
      // Each written mid-run before the next (an embedded database may be slower than the frames).
      await eventually(async () => (await storedNow()) > was || !(await running(start.runId)), 10_000, 20);
    }
    h.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 0, outputTokens: 0 } });
  }
  const db = t.hub.ctx.em().getConnection();
  await eventually(async () => Number((await db.execute(`select count(*)::int as n from session_tasks where session_id = ? and status in ('running','queued')`, [sid]))[0].n) === 0, 10_000);
  const [kept] = await db.execute(`select coalesce(sum(octet_length(content)), 0)::bigint as n from session_messages where session_id = ?`, [sid]);
  const [tasks] = await db.execute(`select count(*)::int as n from session_tasks where session_id = ? and status = 'completed'`, [sid]);
  const stored = Number(kept.n);
  const [full] = await db.execute(`select count(*)::int as n from session_tasks where session_id = ? and error_code = 'SESSION_FULL'`, [sid]);
  assert.ok(full.n >= 1, 'the runs past the bound end SESSION_FULL');
  assert.ok(stored <= SESSION_MAX + RUN_MAX,
    `session stored ${(stored / 1048576).toFixed(2)} MiB over ${tasks.n} completed runs (bound ${SESSION_MAX / 1048576} MiB + one run's ${RUN_MAX / 1048576} MiB)`);
});
