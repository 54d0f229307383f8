// A month of monthly tokens paid through a payment channel was never granted when it extended a plan
// term paid from the balance and already past its first period: a period was due while its number was
// below the periods paid (users.plan_periods), numbered from the term's anchor, so the paid periods were
// the term's first ones, which it had passed. A pro quarter paid from the balance, then at day 65 a pro
// month paid with money (3,000 cents, 20,000 tokens a month): nothing, at once or later. Now a period is
// due while the term's grants are fewer than the periods paid (src/billing/plan-grants.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { PlanGrantSweeper } from '../src/billing/plan-grants.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0, planGrantSweepMs: 0 });
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
const grants = async (key: string) => (await t.client(key).billing.ledger({ type: 'plan', pageSize: 100 })).items.filter((e) => e.amount > 0);

/** Lets `days` pass for the user's plan (as test/billing-plan-grants-paid.test.ts), then one sweep runs. */
async function daysPass(userId: string, days: number) {
  await t.hub.ctx.em().execute(`update plan_grants set anchor_at = anchor_at - (? * interval '1 day') where user_id = ?`, [days, userId]);
  await t.hub.ctx.em().execute(
    `update users set plan_anchor_at = plan_anchor_at - (? * interval '1 day'), plan_expire_at = plan_expire_at - (? * interval '1 day') where id = ?`,
    [days, days, userId],
  );
  await new PlanGrantSweeper(t.hub.ctx).sweepOnce();
}

test('a channel month renewing a balance-paid quarter late in its term grants its monthly tokens', async () => {
  const u = await t.user();
  await t.admin.admin.grantTokens(u.id, 81); // 81,000: the pro quarter's price in tokens
  const c = t.client(u.key);
  assert.equal((await c.billing.buyPlan({ planId: 'pro', cycle: 'quarter', payMethod: 'token' })).status, 'paid');
  assert.equal(await balance(u.key), 0);
  await daysPass(u.id, 30);
  await daysPass(u.id, 35); // day 65 of the quarter
  assert.deepEqual(await grants(u.key), [], 'the quarter paid from the balance grants nothing (documented)');

  // A pro month paid with money (3,000 cents), confirmed as a provider's notification would.
  const o = await c.billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'alipay' });
  assert.equal((await t.admin.admin.confirmPayment(o.id, o.paymentRef!)).status, 'paid');
  const plan = await c.billing.myPlan();
  assert.equal(plan.planId, 'pro');

  // Walk the rest of the extended term (now ends at day 120).
  await daysPass(u.id, 25); // day 90
  await daysPass(u.id, 29); // day 119
  assert.equal((await c.billing.myPlan()).planId, 'pro', 'still inside the term paid for');
  assert.equal((await grants(u.key)).length, 1, 'the month paid through the channel grants its monthly tokens once');
  assert.equal(await balance(u.key), 20_000);
});
