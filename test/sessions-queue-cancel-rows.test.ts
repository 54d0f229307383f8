// a message that waits in a session's queue can be cancelled
// (`DELETE /sessions/{id}/queue/{taskId}`, or all of them by an abort): its user message is deleted and
// its bytes taken off sessions.stored_bytes, but its session_tasks row stays for good, status
// `cancelled` — and that row carries a copy of the agent's workDir (up to 500 characters, ~1.5 KB of
// UTF-8) plus ids, mode and engine. Nothing counts those rows: SESSION_STORED_MAX_BYTES never sees them,
// and the queue bound (10 waiting) only limits how many wait at once. An account with a run in progress
// on its own host loops send → cancel: one permanent row of up to ~2 KB per two requests, about
// 300 rows (~0.6 MB) a minute per API key under the general rate limit (600/min), ~30 MB a minute per
// account with its 50 keys, in one session that still reads as nearly empty.
// Expected: what a session keeps for its queue counts against its stored bytes (409 SESSION_FULL past
// SESSION_STORED_MAX_BYTES, set small here through the config the hub already reads), or a cancelled
// task leaves no row behind. Either way the session's rows stay bounded by its byte budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady } from './helpers/host.js';

const SESSION_MAX = 64 * 1024;

let t: TestHub;
before(async () => {
  t = await startTestHub({ sessionStoredMaxBytes: SESSION_MAX });
});
after(() => t.close());

test('send-then-cancel cannot grow a session\'s rows past its stored-bytes budget', async () => {
  const owner = await t.user('queue-churner');
  const c = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const workDir = '目'.repeat(500); // 500 characters, 1,500 bytes: copied into every task row
  const a = await agentWhenReady(c, { name: 'queue-churn', hostId, engine: 'claude-code', workDir });
  const first: any = await c.sessions.create({ agentId: a.id, content: 'hold the slot' });
  await host.next((f) => f.t === 'run.start' && (f as any).runId === first.taskId);

  const rounds = 60; // ~60 × 1.6 KB of task rows ≈ 1.5 × the session's budget
  let refused: { status: number; text: string } | undefined;
  for (let i = 0; i < rounds; i++) {
    const r = await t.api('POST', `/api/v1/sessions/${encodeURIComponent(first.sessionId)}/messages`, { token: owner.key, body: { content: 'x' } });
    if (r.status !== 202) {
      refused = r;
      break;
    }
    const d = await t.api('DELETE', `/api/v1/sessions/${encodeURIComponent(first.sessionId)}/queue/${encodeURIComponent(r.body.taskId)}`, { token: owner.key });
    assert.equal(d.status, 200, d.text);
  }
  const conn = t.hub.ctx.em().getConnection();
  const [kept] = await conn.execute(
    `select count(*)::int as n, coalesce(sum(pg_column_size(t.*)), 0)::bigint as bytes from session_tasks t where session_id = ?`, [first.sessionId]);
  const [s] = await conn.execute(`select stored_bytes from sessions where id = ?`, [first.sessionId]);
  host.close();
  if (refused) {
    assert.equal(refused.status, 409, refused.text);
  } else {
    assert.ok(Number(kept.bytes) <= SESSION_MAX,
      `${rounds} send/cancel rounds accepted; the session keeps ${kept.n} task rows (${kept.bytes} bytes) while its stored_bytes reads ${s.stored_bytes} of ${SESSION_MAX}`);
  }
});
