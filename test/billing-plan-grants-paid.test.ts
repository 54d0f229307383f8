// A plan's monthly tokens are granted for the periods its cycles paid for (users.plan_periods).
// Found by an audit: tokens paid for a plan came back as its monthly tokens — the team month cost
// 100,000 tokens and granted 100,000 at once, its quarter cost 270,000 and granted 300,000, and a
// year's 365 days held 13 starts of 30-day periods; racing assignments by an administrator each
// granted the first period. Now a cycle paid from the balance pays for its quotas only, one paid
// through a channel for its whole 30-day periods, and an assignment is decided under the row's lock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { planDaysPass } from './helpers/plan-days.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0, planGrantSweepMs: 0 });
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
const grants = async (key: string) => (await t.client(key).billing.ledger({ type: 'plan', pageSize: 100 })).items.filter((e) => e.amount > 0);

const daysPass = (userId: string, days: number) => planDaysPass(t, userId, days);

async function userWith(tokens: number) {
  const u = await t.user();
  for (let left = tokens / 1000; left > 0; left -= 100) await t.admin.admin.grantTokens(u.id, Math.min(100, left));
  assert.equal(await balance(u.key), tokens);
  return u;
}

/** Buys the plan through the sandbox channel and has the administrator confirm the payment. */
async function payByChannel(key: string, planId: string, cycle: 'month' | 'quarter' | 'year') {
  const o = await t.client(key).billing.buyPlan({ planId, cycle, payMethod: 'alipay' });
  assert.equal((await t.admin.admin.confirmPayment(o.id, o.paymentRef!)).status, 'paid');
}

test('a team quarter paid from the balance buys the plan, not tokens: nothing granted over the quarter', async () => {
  const u = await userWith(270_000);
  const c = t.client(u.key);
  assert.equal((await c.billing.buyPlan({ planId: 'team', cycle: 'quarter', payMethod: 'token' })).status, 'paid');
  await daysPass(u.id, 30);
  await daysPass(u.id, 30);
  await daysPass(u.id, 29); // day 89: still inside the quarter that was paid for
  assert.equal((await c.billing.myPlan()).planId, 'team', 'the plan and its quotas are in effect');
  assert.deepEqual(await grants(u.key), []);
  assert.equal(await balance(u.key), 0, 'paid 270,000, minted nothing');
});

test('a team month paid from the balance costs its price', async () => {
  const u = await userWith(100_000);
  const c = t.client(u.key);
  assert.equal((await c.billing.buyPlan({ planId: 'team', cycle: 'month', payMethod: 'token' })).status, 'paid');
  assert.equal(await balance(u.key), 0);
  assert.equal((await c.billing.myPlan()).active, true);
});

test('a year paid through a channel grants 12 months of plan tokens, not 13', async () => {
  const u = await t.user();
  await payByChannel(u.key, 'team', 'year');
  for (let i = 0; i < 12; i++) await daysPass(u.id, 30); // day 360 of 365: the 13th period has started
  assert.equal((await t.client(u.key).billing.myPlan()).planId, 'team');
  assert.equal((await grants(u.key)).length, 12);
  assert.equal(await balance(u.key), 1_200_000);
});

test('a channel month extended from the balance: the paid month is granted, the extension is not; another channel month is', async () => {
  const u = await t.user();
  await payByChannel(u.key, 'pro', 'month');
  assert.equal(await balance(u.key), 20_000, 'the first period at once');
  await t.admin.admin.grantTokens(u.id, 30);
  await t.client(u.key).billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'token' });
  await daysPass(u.id, 30);
  assert.equal((await grants(u.key)).length, 1, 'the month paid from the balance grants nothing');
  await payByChannel(u.key, 'pro', 'month');
  await daysPass(u.id, 30);
  assert.equal((await grants(u.key)).length, 2, 'the third month, paid through a channel, is granted');
});

test('an administrator\'s assignment grants every period while it lasts; the user extending it from the balance adds none', async () => {
  const u = await t.user();
  await t.admin.admin.setPlan(u.id, { planId: 'pro', planExpireAt: Date.now() + 45 * 86_400_000 });
  assert.equal((await grants(u.key)).length, 1);
  await t.admin.admin.grantTokens(u.id, 30);
  await t.client(u.key).billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'token' }); // now 75 days
  await daysPass(u.id, 30);
  await daysPass(u.id, 30);
  assert.equal((await grants(u.key)).length, 2, 'the assignment\'s 45 days hold two periods; the 30 days paid from the balance none');
});

test('the administrator assigning a plan several times at once (a retried PATCH) grants its first period once', async () => {
  const u = await t.user();
  const expire = Date.now() + 30 * 86_400_000;
  const res = await Promise.all(
    Array.from({ length: 6 }, () => t.api('PATCH', `/api/v1/admin/users/${u.id}/plan`, { token: t.adminKey, body: { planId: 'team', planExpireAt: expire } })),
  );
  assert.deepEqual(res.map((r) => r.status), Array(6).fill(200));
  assert.equal((await grants(u.key)).length, 1);
  assert.equal(await balance(u.key), 100_000);
});

// A month of monthly tokens paid through a payment channel was never granted when it extended a plan
// term paid from the balance and already past its first period: a period was due while its number was
// below the periods paid (users.plan_periods), numbered from the term's anchor, so the paid periods were
// the term's first ones, which it had passed. A pro quarter paid from the balance, then at day 65 a pro
// month paid with money (3,000 cents, 20,000 tokens a month): nothing, at once or later. Now a period is
// due while the term's grants are fewer than the periods paid (src/billing/plan-grants.ts).
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
