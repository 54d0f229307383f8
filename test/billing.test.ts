// Balance, ledger, trends, administrator grants and plan overrides, plans and orders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import type { LedgerParams, OrdersParams, PlanOrder, TokenPackOrder, TrendsParams, UserPlanBody } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

test('a new account has a zero balance, an empty ledger and zero-filled trends', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const b = await c.billing.balance();
  assert.equal(b.balance, 0);
  assert.equal(b.totalIncome, 0);
  const l = await c.billing.ledger();
  assert.deepEqual([l.items, l.total, l.page, l.pageSize, l.hasMore], [[], 0, 1, 20, false]);
  const tr = await c.billing.trends({ range: '7d' });
  assert.equal(tr.points.length, 7);
  assert.ok(tr.points.every((p) => p.income === 0 && p.spent === 0));
  assert.match(tr.points[6].date, /^\d{4}-\d\d-\d\d$/);
  assert.equal(tr.points[6].date, new Date().toISOString().slice(0, 10));
  assert.equal((await c.billing.trends()).points.length, 30);
  const anon = t.client().billing;
  for (const [name, call] of [['balance', anon.balance], ['ledger', anon.ledger], ['trends', anon.trends], ['myPlan', anon.myPlan]] as const) {
    await assert.rejects(call(), apiError(401), name);
  }
});

test('grant-token: qty × 1000 tokens through the ledger; null or empty body grants 1000', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const g = await t.admin.admin.grantTokens(u.id, 3);
  assert.deepEqual([g.tokens, g.balance, g.qty], [3000, 3000, 3]);
  assert.equal((await t.admin.admin.grantTokens(u.id)).balance, 4000, 'the client sends null without a qty');
  // No body and an empty object: request shapes the client never sends.
  assert.equal((await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey })).body.data.balance, 5000);
  assert.equal((await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: {} })).body.data.balance, 6000);

  const me = await c.me();
  assert.equal(me.balance, 6000);
  const l = await c.billing.ledger({ pageSize: 2 });
  assert.equal(l.total, 4);
  assert.equal(l.hasMore, true);
  assert.equal(l.items.length, 2);
  const first = l.items[0];
  assert.deepEqual([first.amount, first.type, first.balanceAfter], [1000, 'grant', 6000]);
  assert.match(first.createdAt, /^\d{4}-/);
  const bal = await c.billing.balance();
  assert.deepEqual([bal.balance, bal.totalIncome, bal.totalSpent], [6000, 6000, 0]);
  const tr = await c.billing.trends({ range: '7d', type: 'grant' });
  assert.equal(tr.totals.income, 6000);
  assert.equal(tr.points[6].income, 6000);
  assert.equal((await c.billing.trends({ range: '7d', type: 'spend' })).totals.income, 0);
});

test('grant-token validation and authorization', async () => {
  const u = await t.user();
  for (const qty of [0, 101, 1.5]) await assert.rejects(t.admin.admin.grantTokens(u.id, qty), apiError(400), String(qty));
  // An unknown field and an array: bodies outside the typed shape.
  assert.equal((await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: { qty: 1, extra: true } })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: [1] })).status, 400);
  await assert.rejects(t.admin.admin.grantTokens('usr_nobody', 1), apiError(404));
  await assert.rejects(t.client(u.key).admin.grantTokens(u.id, 1), apiError(403, '4031'));
  assert.equal((await t.client(u.key).billing.balance()).balance, 0);
});

test('ledger and trends reject unknown range and type values', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  // The failure envelope itself: `data` is null on a 400.
  for (const q of ['range=1y', 'type=gift', 'page=0', 'pageSize=101', 'nope=1']) {
    const r = await t.api('GET', `/api/v1/me/ledger?${q}`, { token: u.key });
    assert.equal(r.status, 400, q);
    assert.equal(r.body.data, null);
  }
  await assert.rejects(c.billing.trends({ range: 'all' } as unknown as TrendsParams), apiError(400));
  await assert.rejects(c.billing.trends({ type: 'x' } as unknown as TrendsParams), apiError(400));
  for (const q of [{ range: '7d' }, { range: '30d' }, { range: '90d' }, { range: 'all' }, { type: 'refund' }] as LedgerParams[]) {
    await c.billing.ledger(q);
  }
});

test('plans catalogue is public; /me/plan reads free until a plan is bought', async () => {
  const anon = t.client();
  const p = await anon.billing.plans();
  const ids = p.items.map((x) => x.id);
  assert.deepEqual(ids, ['free', 'pro', 'team']);
  const pro = p.items[1];
  assert.ok(pro.prices.month.tokens > 0 && pro.prices.year.cents > 0 && pro.quotas.hosts > 0);
  const packs = await anon.billing.tokenPacks();
  assert.equal(packs.items.find((x) => x.default)?.id, 'pack-1k');
  const u = await t.user();
  const mp = await t.client(u.key).billing.myPlan();
  assert.deepEqual([mp.planId, mp.active, mp.expireAt], ['free', false, null]);
});

test('plan paid with tokens: charged through the ledger, plan set, extended on renewal; short balance → 4091', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const proMonth: PlanOrder = { planId: 'pro', cycle: 'month', payMethod: 'token' };
  await assert.rejects(c.billing.buyPlan(proMonth), apiError(429, '4091'));
  assert.equal((await c.billing.orders()).total, 0, 'a refused order leaves nothing behind');

  await t.admin.admin.grantTokens(u.id, 70);
  const o = await c.billing.buyPlan(proMonth);
  assert.deepEqual([o.status, o.type, o.tokens, o.cycle], ['paid', 'plan', 30000, 'month']);
  const bal = await c.billing.balance();
  assert.equal(bal.balance, 40000, 'price paid; a plan paid from the balance grants no monthly tokens (billing-plan-grants-paid.test.ts)');
  const led = await c.billing.ledger({ type: 'plan' });
  assert.deepEqual(led.items.find((e) => e.ref === o.id)?.amount, -30000);
  assert.deepEqual(led.items.filter((e) => e.amount > 0).map((e) => e.amount), []);

  const mp = await c.billing.myPlan();
  assert.equal(mp.planId, 'pro');
  assert.equal(mp.active, true);
  const day = 86_400_000;
  assert.ok(Math.abs(mp.expireAt! - (Date.now() + 30 * day)) < 60_000);

  await c.billing.buyPlan(proMonth);
  const mp2 = await c.billing.myPlan();
  assert.ok(Math.abs(mp2.expireAt! - (mp.expireAt! + 30 * day)) < 5_000, 'renewal extends from the current expiry');
  assert.equal((await c.billing.balance()).balance, 10000, 'a renewal within the period grants nothing more');
  assert.equal((await c.billing.trends({ range: '7d' })).totals.spent, 60000);
});

test('channel orders stay pending until an administrator confirms payment; then tokens or plan are delivered once', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const o = await c.billing.buyTokenPack({ packId: 'pack-10k', qty: 2, payMethod: 'alipay' });
  assert.deepEqual([o.status, o.tokens, o.amountCents, o.payMethod], ['pending', 20000, 1900, 'alipay']);
  assert.match(o.paymentRef!, /^pay_/);
  assert.equal((await c.billing.balance()).balance, 0);

  const dflt = await c.billing.buyTokenPack({ payMethod: 'wechat' });
  assert.deepEqual([dflt.itemId, dflt.qty, dflt.tokens], ['pack-1k', 1, 1000]);

  await assert.rejects(c.admin.confirmPayment(o.id), apiError(403));
  await assert.rejects(t.admin.admin.confirmPayment(o.id, 'pay_other'), apiError(400));
  const paid = await t.admin.admin.confirmPayment(o.id, o.paymentRef!);
  assert.equal(paid.status, 'paid');
  assert.ok(paid.paidAt);
  await assert.rejects(t.admin.admin.confirmPayment(o.id), apiError(409));
  assert.equal((await c.billing.balance()).balance, 20000);
  const led = await c.billing.ledger({ type: 'purchase' });
  assert.deepEqual([led.total, led.items[0].ref], [1, o.id]);

  const plan = await c.billing.buyPlan({ planId: 'team', cycle: 'year', payMethod: 'wechat' });
  assert.deepEqual([plan.status, plan.amountCents], ['pending', 96000]);
  assert.equal((await c.billing.myPlan()).planId, 'free');
  await t.admin.admin.confirmPayment(plan.id);
  const mp = await c.billing.myPlan();
  assert.equal(mp.planId, 'team');
  assert.ok(Math.abs(mp.expireAt! - (Date.now() + 365 * 86_400_000)) < 60_000);
  assert.equal((await c.billing.balance()).balance, 20000 + 100000, 'paid through a channel; the plan grants its first month of tokens');

  const list = await c.billing.orders({ status: 'pending' });
  assert.deepEqual(list.items.map((x) => x.id), [dflt.id]);
  assert.equal((await c.billing.orders({ type: 'plan' })).total, 1);
  assert.equal((await c.billing.orders()).total, 3);

  const cancel = await c.billing.cancelOrder(dflt.id);
  assert.equal(cancel.status, 'cancelled');
  await assert.rejects(c.billing.cancelOrder(dflt.id), apiError(409));
  await assert.rejects(t.admin.admin.confirmPayment(dflt.id), apiError(409));
  await assert.rejects(t.admin.admin.confirmPayment('ord_nothing'), apiError(404));
});

test("orders: validation, and another account's order is a 404", async () => {
  const a = await t.user();
  const b = await t.user();
  const ca = t.client(a.key);
  const cb = t.client(b.key);
  const bad: unknown[] = [{}, { payMethod: 'token' }, { payMethod: 'paypal' }, { payMethod: 'alipay', qty: 0 }, { payMethod: 'alipay', qty: 100 }, { payMethod: 'alipay', extra: 1 }];
  for (const body of bad) await assert.rejects(ca.billing.buyTokenPack(body as TokenPackOrder), apiError(400), JSON.stringify(body));
  await assert.rejects(ca.billing.buyTokenPack({ packId: 'nope', payMethod: 'alipay' }), apiError(404));
  const badPlan: unknown[] = [
    { planId: 'pro', cycle: 'week', payMethod: 'token' },
    { planId: 'pro', cycle: 'month' },
    { planId: 'pro', cycle: 'month', payMethod: 'cash' },
    { planId: 'free', cycle: 'month', payMethod: 'token' },
  ];
  for (const body of badPlan) await assert.rejects(ca.billing.buyPlan(body as PlanOrder), apiError(400), JSON.stringify(body));
  await assert.rejects(ca.billing.buyPlan({ planId: 'gold', cycle: 'month', payMethod: 'alipay' }), apiError(404));
  await assert.rejects(ca.billing.orders({ status: 'done' } as unknown as OrdersParams), apiError(400));
  await assert.rejects(t.client().billing.buyTokenPack({ payMethod: 'alipay' }), apiError(401));

  const o = await ca.billing.buyTokenPack({ payMethod: 'alipay' });
  assert.equal((await ca.billing.order(o.id)).id, o.id);
  await assert.rejects(cb.billing.order(o.id), apiError(404));
  await assert.rejects(cb.billing.cancelOrder(o.id), apiError(404));
  assert.equal((await cb.billing.orders()).total, 0);
});

test('admin sets and clears a plan; expired plans read as free', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const setPlan = (body: UserPlanBody) => t.admin.admin.setPlan(u.id, body);
  const exp = Date.now() + 5 * 86_400_000;
  const r = await setPlan({ planId: 'pro', planExpireAt: exp });
  assert.deepEqual([r.planId, r.planExpireAt], ['pro', exp]);
  assert.deepEqual((await c.billing.myPlan()).expireAt, exp);

  await setPlan({ planExpireAt: Date.now() - 1000 });
  const expired = await c.billing.myPlan();
  assert.deepEqual([expired.planId, expired.active, expired.subscribedPlanId], ['free', false, 'pro']);

  const forever = await setPlan({ planExpireAt: null });
  assert.equal(forever.planExpireAt, null);
  assert.equal((await c.billing.myPlan()).active, true);

  const cleared = await setPlan({ planId: null });
  assert.deepEqual([cleared.planId, cleared.planExpireAt], [null, null]);

  await assert.rejects(setPlan({ planId: 'gold' }), apiError(400));
  await assert.rejects(setPlan({ planExpireAt: 'soon' } as unknown as UserPlanBody), apiError(400));
  await assert.rejects(setPlan({ plan: 'pro' } as UserPlanBody), apiError(400));
  await assert.rejects(t.admin.admin.setPlan('usr_nobody', { planId: 'pro' }), apiError(404));
  await assert.rejects(c.admin.setPlan(u.id, { planId: 'pro' }), apiError(403, '4031'));
});

test('concurrent spends never overdraw: exactly as many succeed as the balance allows', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  await t.admin.admin.grantTokens(u.id, 60); // 60,000 tokens: two pro months
  const tries = await Promise.allSettled(Array.from({ length: 5 }, () => c.billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'token' })));
  const outcomes = tries.map((r) => (r.status === 'fulfilled' ? r.value.status : `${r.reason.status} ${r.reason.code}`)).sort();
  assert.deepEqual(outcomes, ['429 4091', '429 4091', '429 4091', 'paid', 'paid']);
  const bal = await c.billing.balance();
  assert.equal(bal.balance, 60000 - 2 * 30000, 'two months paid (from the balance: no monthly tokens)');
  const led = await c.billing.ledger();
  const sum = led.items.reduce((s, e) => s + e.amount, 0);
  assert.equal(sum, 0, 'the ledger adds up to the balance');
});
