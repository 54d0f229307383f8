// the `agents` plan quota (3 on the free plan) counts the agents an account holds now,
// but deleting an agent inserts its id into agent_ids_retired for good (src/agents/manage.ts, remove:
// ids are never given again). So an account loops create → delete and writes one permanent row per
// two requests — about 300 a minute per API key under the general rate limit (600/min), 50 keys per
// account — and, re-using one name, each create reads every retired `<stem>-n` id of that stem to pick
// the next suffix (insertWithFreshId), so each create costs more than the last. Deleted sessions, by
// contrast, still count against sessionsPerDay (session_opens), so churn does not dodge that quota.
// Assumed: an account creates at most max(100, its plan's agents quota) agents a day, deleted ones
// included; past that 409 or 429 with the hub's envelope.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

const ASSUMED_PER_DAY = 100;

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test(`create-then-delete does not let a free account create more than ${ASSUMED_PER_DAY} agents a day`, async () => {
  const u = await t.user('agent-churner');
  let created = 0;
  let refusal: { status: number; text: string; body: any } | undefined;
  for (let i = 0; i < ASSUMED_PER_DAY + 10; i++) {
    const r = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'churn', step: 'draft' } });
    if (r.status !== 201) {
      refusal = r;
      break;
    }
    created++;
    const d = await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(r.body.data.id)}`, { token: u.key });
    assert.equal(d.status, 204, d.text);
  }
  const [retired] = await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from agent_ids_retired where id like 'agent-churner/%'`);
  assert.ok(refusal, `${created} agents created and deleted in a row on the free plan (quota 3); ${retired.n} ids retired for good; none refused`);
  assert.ok(refusal.status === 409 || refusal.status === 429, `refused with ${refusal.status}: ${refusal.text}`);
  assert.equal(refusal.body?.data, null);
});
