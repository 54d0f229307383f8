// the `agents` plan quota (3 on the free plan) counts the agents an account holds now,
// but deleting an agent inserts its id into agent_ids_retired for good (src/agents/manage.ts, remove:
// ids are never given again). So an account loops create → delete and writes one permanent row per
// two requests — about 300 a minute per API key under the general rate limit (600/min), 50 keys per
// account — and, re-using one name, each create reads every retired `<stem>-n` id of that stem to pick
// the next suffix (insertWithFreshId), so each create costs more than the last. Deleted sessions, by
// contrast, still count against sessionsPerDay (session_opens), so churn does not dodge that quota.
// Now: an account that deleted AGENT_RETIREMENTS_PER_DAY agents in the last 24 hours creates none until
// those deletions age (429 with the hub's envelope); creating without deleting is bounded by the quota.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { AGENT_RETIREMENTS_PER_DAY } from '../src/account-caps.js';


let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test(`create-then-delete does not let an account create more once it deleted ${AGENT_RETIREMENTS_PER_DAY} agents in a day`, async () => {
  const u = await t.user('agent-churner');
  const churn = async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'churn', step: 'draft' } });
    if (r.status !== 201) return r;
    const d = await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(r.body.data.id)}`, { token: u.key });
    assert.equal(d.status, 204, d.text);
    return undefined;
  };
  // A deletion through the API retires its id under its owner.
  assert.equal(await churn(), undefined);
  const sql = t.hub.ctx.em().getConnection();
  const retiredOf = async () => Number((await sql.execute(`select count(*)::int as n from agent_ids_retired where owner_id = ?`, [u.id]))[0].n);
  assert.equal(await retiredOf(), 1);
  // The rest of a day's deletions, as earlier loops of the same would have left them.
  await sql.execute(`insert into agent_ids_retired (id, owner_id) select 'agent-churner/seeded-' || g, ? from generate_series(2, ?) g`, [u.id, AGENT_RETIREMENTS_PER_DAY]);
  const refusal = await churn();
  assert.ok(refusal, `${await retiredOf()} ids retired in a day and still another agent was created (the quota counts only agents held)`);
  assert.ok(refusal.status === 409 || refusal.status === 429, `refused with ${refusal.status}: ${refusal.text}`);
  assert.equal(refusal.body?.data, null);
  // A day later the deletions age out.
  await sql.execute(`update agent_ids_retired set retired_at = now() - interval '25 hours' where owner_id = ?`, [u.id]);
  assert.equal(await churn(), undefined);
});
