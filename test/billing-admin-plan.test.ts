// PATCH /api/v1/admin/users/{id}/plan (src/billing/subscriptions.ts setPlan), rule by rule. Found by the
// mutation audit (fifty-fourth session): its refusals, the clearing of a plan, and when an assignment
// starts a new term (its monthly-token periods counted from now) each had no test that failed without them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { planDaysPass } from './helpers/plan-days.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0, planGrantSweepMs: 0 });
});
after(() => t.close());

const DAY = 86_400_000;
const patch = (userId: string, body: unknown) => t.api('PATCH', `/api/v1/admin/users/${userId}/plan`, { token: t.adminKey, body });
const grants = async (key: string) => (await t.client(key).billing.ledger({ type: 'plan', pageSize: 100 })).items.filter((e) => e.amount > 0);
const balance = async (key: string) => (await t.client(key).billing.balance()).balance;

const daysPass = (userId: string, days: number) => planDaysPass(t, userId, days);

test('refusals: an expiry without a plan, an expiry for a user with none, an unknown user', async () => {
  const u = await t.user();
  const a = await patch(u.id, { planId: null, planExpireAt: Date.now() + DAY });
  assert.equal(a.status, 400, 'clearing the plan while setting an expiry');
  const b = await patch(u.id, { planExpireAt: Date.now() + DAY });
  assert.equal(b.status, 400, 'an expiry for a user without a plan');
  assert.equal((await t.client(u.key).me()).planId, null, 'nothing was assigned');
  const c = await patch('usr_nobody', { planId: 'pro' });
  assert.equal(c.status, 404);
});

test('clearing a plan clears its expiry: the next assignment without one lasts', async () => {
  const u = await t.user();
  assert.equal((await patch(u.id, { planId: 'pro', planExpireAt: Date.now() + 10 * DAY })).status, 200);
  const cleared = await patch(u.id, { planId: null });
  assert.equal(cleared.status, 200);
  assert.deepEqual([(cleared.body as any).data.planId, (cleared.body as any).data.planExpireAt], [null, null]);
  const again = await patch(u.id, { planId: 'pro' });
  assert.equal((again.body as any).data.planExpireAt, null, 'the old expiry came back with the plan');
});

test('assigning another plan starts its term: its first monthly tokens at once', async () => {
  const u = await t.user();
  await patch(u.id, { planId: 'pro', planExpireAt: Date.now() + 60 * DAY });
  await daysPass(u.id, 20);
  assert.equal(await balance(u.key), 20_000, "pro's first period");
  assert.equal((await patch(u.id, { planId: 'team', planExpireAt: Date.now() + 60 * DAY })).status, 200);
  assert.equal(await balance(u.key), 120_000, "team's first period at once, not at pro's next period");
});

test('assigning again a plan that has expired starts a new term: its first monthly tokens at once', async () => {
  const u = await t.user();
  await patch(u.id, { planId: 'pro', planExpireAt: Date.now() + 40 * DAY });
  await daysPass(u.id, 30); // day 30: the second period granted
  await daysPass(u.id, 15); // day 45: expired at day 40
  assert.equal((await grants(u.key)).length, 2);
  assert.equal((await t.client(u.key).billing.myPlan()).active, false, 'precondition: expired');
  assert.equal((await patch(u.id, { planId: 'pro', planExpireAt: Date.now() + 30 * DAY })).status, 200);
  assert.equal((await grants(u.key)).length, 3, 'the new term grants its first period now');
  await daysPass(u.id, 20);
  assert.equal((await grants(u.key)).length, 3, 'and its next one 30 days after the assignment, not after the old term');
});

test("an administrator's assignment over a plan paid from the balance grants every period while it lasts", async () => {
  const u = await t.user();
  await t.admin.admin.grantTokens(u.id, 30); // 30,000: a pro month's price in tokens
  assert.equal((await t.client(u.key).billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'token' })).status, 'paid');
  assert.deepEqual(await grants(u.key), [], 'a month paid from the balance grants nothing (documented)');
  assert.equal((await patch(u.id, { planId: 'pro', planExpireAt: Date.now() + 60 * DAY })).status, 200);
  assert.equal((await grants(u.key)).length, 1, 'the assignment grants the current period');
  await daysPass(u.id, 30);
  assert.equal((await grants(u.key)).length, 2, 'and the next');
});
