// Messages one account may store (audit, forty-sixth session; open). A message's content is ≤ 100,000 characters
// (up to 300 KB of UTF-8), but nothing bounds how many messages a session (or an account) holds,
// nor their bytes: plan quotas count sessions per day, hosts and agents only, and the waiting-queue
// limit (10) counts waiting messages only. With its own host ending each run at once with zero usage
// (free runs), one account stores ≈ 300 KB per request: at the general rate limit (600/min per API
// key, 50 keys) that is ≈ 10 GB an hour per key into session_messages, kept for good.
// Expected: a bound on what a session (or account) stores — refused 4xx past it. This test states
// 8 MiB of user content for one session (the order of RUN_OUTPUT_MAX_BYTES) as the bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { ApiError, type AcceptedRun } from '../src/client/index.js';

const EXPECTED_SESSION_BYTES = 8 * 1024 * 1024;
let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t?.close();
});

// Not fixed yet (issue 15's note): a bound needs a stored-bytes count kept by hub_accept, hub_end_runs and
// the mid-run write, beside message_count; until then this reports the hole without failing the suite.
test('one session cannot be made to store more than 8 MiB of message content', { todo: 'no per-session or per-account storage bound yet' }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'free-host');
  host = await connectFakeHost(t, credential, { capacity: 4 });
  const h = host;
  // The attacker's own host: every run ends at once, zero usage, so every message is free.
  h.ws.on('message', () => {
    for (const f of h.frames.splice(0)) {
      if (f.t === 'run.start') h.send({ t: 'run.end', runId: (f as any).runId, ok: true, usage: { inputTokens: 0, outputTokens: 0 } });
    }
  });
  const c = t.client(u.key);
  const agent = await eventually(() => c.agents.create({ name: 'sink', hostId, engine: 'claude-code', workDir: 'w' }));
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
