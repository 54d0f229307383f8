// Balance, ledger, trends, administrator grants and plan overrides, plans and orders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

const grant = (id: string, body: unknown) => t.api('POST', `/api/v1/admin/users/${id}/grant-token`, { token: t.adminKey, ...(body === undefined ? {} : { body }) });

test('a new account has a zero balance, an empty ledger and zero-filled trends', async () => {
  const u = await t.user();
  const b = await t.api('GET', '/api/v1/me/balance', { token: u.key });
  assert.equal(b.status, 200);
  assert.equal(b.body.data.balance, 0);
  assert.equal(b.body.data.totalIncome, 0);
  const l = await t.api('GET', '/api/v1/me/ledger', { token: u.key });
  assert.deepEqual([l.body.data.items, l.body.data.total, l.body.data.page, l.body.data.pageSize, l.body.data.hasMore], [[], 0, 1, 20, false]);
  const tr = await t.api('GET', '/api/v1/me/trends?range=7d', { token: u.key });
  assert.equal(tr.status, 200);
  assert.equal(tr.body.data.points.length, 7);
  assert.ok(tr.body.data.points.every((p: any) => p.income === 0 && p.spent === 0));
  assert.match(tr.body.data.points[6].date, /^\d{4}-\d\d-\d\d$/);
  assert.equal(tr.body.data.points[6].date, new Date().toISOString().slice(0, 10));
  assert.equal((await t.api('GET', '/api/v1/me/trends', { token: u.key })).body.data.points.length, 30);
  for (const p of ['/api/v1/me/balance', '/api/v1/me/ledger', '/api/v1/me/trends', '/api/v1/me/plan']) {
    assert.equal((await t.api('GET', p)).status, 401, p);
  }
});

test('grant-token: qty × 1000 tokens through the ledger; null or empty body grants 1000', async () => {
  const u = await t.user();
  const g = await grant(u.id, { qty: 3 });
  assert.equal(g.status, 200);
  assert.deepEqual([g.body.data.tokens, g.body.data.balance, g.body.data.qty], [3000, 3000, 3]);
  assert.equal((await grant(u.id, null)).body.data.balance, 4000);
  assert.equal((await grant(u.id, undefined)).body.data.balance, 5000);
  assert.equal((await grant(u.id, {})).body.data.balance, 6000);

  const me = await t.api('GET', '/api/v1/me', { token: u.key });
  assert.equal(me.body.data.balance, 6000);
  const l = await t.api('GET', '/api/v1/me/ledger?pageSize=2', { token: u.key });
  assert.equal(l.body.data.total, 4);
  assert.equal(l.body.data.hasMore, true);
  assert.equal(l.body.data.items.length, 2);
  const first = l.body.data.items[0];
  assert.deepEqual([first.amount, first.type, first.balanceAfter], [1000, 'grant', 6000]);
  assert.match(first.createdAt, /^\d{4}-/);
  const bal = await t.api('GET', '/api/v1/me/balance', { token: u.key });
  assert.deepEqual([bal.body.data.balance, bal.body.data.totalIncome, bal.body.data.totalSpent], [6000, 6000, 0]);
  const tr = await t.api('GET', '/api/v1/me/trends?range=7d&type=grant', { token: u.key });
  assert.equal(tr.body.data.totals.income, 6000);
  assert.equal(tr.body.data.points[6].income, 6000);
  assert.equal((await t.api('GET', '/api/v1/me/trends?range=7d&type=spend', { token: u.key })).body.data.totals.income, 0);
});

test('grant-token validation and authorization', async () => {
  const u = await t.user();
  assert.equal((await grant(u.id, { qty: 0 })).status, 400);
  assert.equal((await grant(u.id, { qty: 101 })).status, 400);
  assert.equal((await grant(u.id, { qty: 1.5 })).status, 400);
  assert.equal((await grant(u.id, { qty: 1, extra: true })).status, 400);
  assert.equal((await grant(u.id, [1])).status, 400);
  assert.equal((await grant('usr_nobody', { qty: 1 })).status, 404);
  const asUser = await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: u.key, body: { qty: 1 } });
  assert.equal(asUser.status, 403);
  assert.equal(asUser.body.code, '4031');
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 0);
});

test('ledger and trends reject unknown range and type values', async () => {
  const u = await t.user();
  for (const q of ['range=1y', 'type=gift', 'page=0', 'pageSize=101', 'nope=1']) {
    const r = await t.api('GET', `/api/v1/me/ledger?${q}`, { token: u.key });
    assert.equal(r.status, 400, q);
    assert.equal(r.body.data, null);
  }
  assert.equal((await t.api('GET', '/api/v1/me/trends?range=all', { token: u.key })).status, 400);
  assert.equal((await t.api('GET', '/api/v1/me/trends?type=x', { token: u.key })).status, 400);
  for (const q of ['range=7d', 'range=30d', 'range=90d', 'range=all', 'type=refund']) {
    assert.equal((await t.api('GET', `/api/v1/me/ledger?${q}`, { token: u.key })).status, 200, q);
  }
});

test('plans catalogue is public; /me/plan reads free until a plan is bought', async () => {
  const p = await t.api('GET', '/api/v1/plans');
  assert.equal(p.status, 200);
  const ids = p.body.data.items.map((x: any) => x.id);
  assert.deepEqual(ids, ['free', 'pro', 'team']);
  const pro = p.body.data.items[1];
  assert.ok(pro.prices.month.tokens > 0 && pro.prices.year.cents > 0 && pro.quotas.hosts > 0);
  const packs = await t.api('GET', '/api/v1/token-packs');
  assert.equal(packs.body.data.items.find((x: any) => x.default).id, 'pack-1k');
  const u = await t.user();
  const mp = await t.api('GET', '/api/v1/me/plan', { token: u.key });
  assert.deepEqual([mp.body.data.planId, mp.body.data.active, mp.body.data.expireAt], ['free', false, null]);
});

test('plan paid with tokens: charged through the ledger, plan set, extended on renewal; short balance → 4091', async () => {
  const u = await t.user();
  const short = await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } });
  assert.equal(short.status, 429);
  assert.equal(short.body.code, '4091');
  assert.equal((await t.api('GET', '/api/v1/orders', { token: u.key })).body.data.total, 0, 'a refused order leaves nothing behind');

  await grant(u.id, { qty: 70 });
  const o = await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } });
  assert.equal(o.status, 201);
  assert.deepEqual([o.body.data.status, o.body.data.type, o.body.data.tokens, o.body.data.cycle], ['paid', 'plan', 30000, 'month']);
  const bal = await t.api('GET', '/api/v1/me/balance', { token: u.key });
  assert.equal(bal.body.data.balance, 40000 + 20000, 'price paid, then the first month of the plan\'s tokens granted');
  const led = await t.api('GET', '/api/v1/me/ledger?type=plan', { token: u.key });
  assert.deepEqual(led.body.data.items.find((e: any) => e.ref === o.body.data.id)?.amount, -30000);
  assert.deepEqual(led.body.data.items.filter((e: any) => e.amount > 0).map((e: any) => e.amount), [20000]);

  const mp = await t.api('GET', '/api/v1/me/plan', { token: u.key });
  assert.equal(mp.body.data.planId, 'pro');
  assert.equal(mp.body.data.active, true);
  const day = 86_400_000;
  assert.ok(Math.abs(mp.body.data.expireAt - (Date.now() + 30 * day)) < 60_000);

  await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } });
  const mp2 = await t.api('GET', '/api/v1/me/plan', { token: u.key });
  assert.ok(Math.abs(mp2.body.data.expireAt - (mp.body.data.expireAt + 30 * day)) < 5_000, 'renewal extends from the current expiry');
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 30000, 'a renewal within the period grants nothing more');
  assert.equal((await t.api('GET', '/api/v1/me/trends?range=7d', { token: u.key })).body.data.totals.spent, 60000);
});

test('channel orders stay pending until an administrator confirms payment; then tokens or plan are delivered once', async () => {
  const u = await t.user();
  const o = await t.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { packId: 'pack-10k', qty: 2, payMethod: 'alipay' } });
  assert.equal(o.status, 201);
  assert.deepEqual([o.body.data.status, o.body.data.tokens, o.body.data.amountCents, o.body.data.payMethod], ['pending', 20000, 1900, 'alipay']);
  assert.match(o.body.data.paymentRef, /^pay_/);
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 0);

  const dflt = await t.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { payMethod: 'wechat' } });
  assert.deepEqual([dflt.body.data.itemId, dflt.body.data.qty, dflt.body.data.tokens], ['pack-1k', 1, 1000]);

  const byUser = await t.api('POST', `/api/v1/admin/orders/${o.body.data.id}/confirm-payment`, { token: u.key });
  assert.equal(byUser.status, 403);
  const wrongRef = await t.api('POST', `/api/v1/admin/orders/${o.body.data.id}/confirm-payment`, { token: t.adminKey, body: { paymentRef: 'pay_other' } });
  assert.equal(wrongRef.status, 400);
  const paid = await t.api('POST', `/api/v1/admin/orders/${o.body.data.id}/confirm-payment`, { token: t.adminKey, body: { paymentRef: o.body.data.paymentRef } });
  assert.equal(paid.status, 200);
  assert.equal(paid.body.data.status, 'paid');
  assert.ok(paid.body.data.paidAt);
  const again = await t.api('POST', `/api/v1/admin/orders/${o.body.data.id}/confirm-payment`, { token: t.adminKey });
  assert.equal(again.status, 409);
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 20000);
  const led = await t.api('GET', '/api/v1/me/ledger?type=purchase', { token: u.key });
  assert.deepEqual([led.body.data.total, led.body.data.items[0].ref], [1, o.body.data.id]);

  const plan = await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'team', cycle: 'year', payMethod: 'wechat' } });
  assert.deepEqual([plan.body.data.status, plan.body.data.amountCents], ['pending', 96000]);
  assert.equal((await t.api('GET', '/api/v1/me/plan', { token: u.key })).body.data.planId, 'free');
  await t.api('POST', `/api/v1/admin/orders/${plan.body.data.id}/confirm-payment`, { token: t.adminKey });
  const mp = await t.api('GET', '/api/v1/me/plan', { token: u.key });
  assert.equal(mp.body.data.planId, 'team');
  assert.ok(Math.abs(mp.body.data.expireAt - (Date.now() + 365 * 86_400_000)) < 60_000);
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 20000 + 100000, 'paid through a channel; the plan grants its first month of tokens');

  const list = await t.api('GET', '/api/v1/orders?status=pending', { token: u.key });
  assert.deepEqual(list.body.data.items.map((x: any) => x.id), [dflt.body.data.id]);
  assert.equal((await t.api('GET', '/api/v1/orders?type=plan', { token: u.key })).body.data.total, 1);
  assert.equal((await t.api('GET', '/api/v1/orders', { token: u.key })).body.data.total, 3);

  const cancel = await t.api('POST', `/api/v1/orders/${dflt.body.data.id}/cancel`, { token: u.key });
  assert.equal(cancel.body.data.status, 'cancelled');
  assert.equal((await t.api('POST', `/api/v1/orders/${dflt.body.data.id}/cancel`, { token: u.key })).status, 409);
  assert.equal((await t.api('POST', `/api/v1/admin/orders/${dflt.body.data.id}/confirm-payment`, { token: t.adminKey })).status, 409);
  assert.equal((await t.api('POST', `/api/v1/admin/orders/ord_nothing/confirm-payment`, { token: t.adminKey })).status, 404);
});

test("orders: validation, and another account's order is a 404", async () => {
  const a = await t.user();
  const b = await t.user();
  const bad: unknown[] = [
    {},
    { payMethod: 'token' },
    { payMethod: 'paypal' },
    { payMethod: 'alipay', qty: 0 },
    { payMethod: 'alipay', qty: 100 },
    { payMethod: 'alipay', extra: 1 },
  ];
  for (const body of bad) assert.equal((await t.api('POST', '/api/v1/orders/token-pack', { token: a.key, body })).status, 400, JSON.stringify(body));
  assert.equal((await t.api('POST', '/api/v1/orders/token-pack', { token: a.key, body: { packId: 'nope', payMethod: 'alipay' } })).status, 404);
  const badPlan: unknown[] = [
    { planId: 'pro', cycle: 'week', payMethod: 'token' },
    { planId: 'pro', cycle: 'month' },
    { planId: 'pro', cycle: 'month', payMethod: 'cash' },
    { planId: 'free', cycle: 'month', payMethod: 'token' },
  ];
  for (const body of badPlan) assert.equal((await t.api('POST', '/api/v1/orders/plan', { token: a.key, body })).status, 400, JSON.stringify(body));
  assert.equal((await t.api('POST', '/api/v1/orders/plan', { token: a.key, body: { planId: 'gold', cycle: 'month', payMethod: 'alipay' } })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/orders?status=done', { token: a.key })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/orders/token-pack', { body: { payMethod: 'alipay' } })).status, 401);

  const o = await t.api('POST', '/api/v1/orders/token-pack', { token: a.key, body: { payMethod: 'alipay' } });
  assert.equal((await t.api('GET', `/api/v1/orders/${o.body.data.id}`, { token: a.key })).status, 200);
  assert.equal((await t.api('GET', `/api/v1/orders/${o.body.data.id}`, { token: b.key })).status, 404);
  assert.equal((await t.api('POST', `/api/v1/orders/${o.body.data.id}/cancel`, { token: b.key })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/orders', { token: b.key })).body.data.total, 0);
});

test('admin sets and clears a plan; expired plans read as free', async () => {
  const u = await t.user();
  const path = `/api/v1/admin/users/${u.id}/plan`;
  const exp = Date.now() + 5 * 86_400_000;
  const r = await t.api('PATCH', path, { token: t.adminKey, body: { planId: 'pro', planExpireAt: exp } });
  assert.equal(r.status, 200);
  assert.deepEqual([r.body.data.planId, r.body.data.planExpireAt], ['pro', exp]);
  assert.deepEqual((await t.api('GET', '/api/v1/me/plan', { token: u.key })).body.data.expireAt, exp);

  await t.api('PATCH', path, { token: t.adminKey, body: { planExpireAt: Date.now() - 1000 } });
  const expired = await t.api('GET', '/api/v1/me/plan', { token: u.key });
  assert.deepEqual([expired.body.data.planId, expired.body.data.active, expired.body.data.subscribedPlanId], ['free', false, 'pro']);

  const forever = await t.api('PATCH', path, { token: t.adminKey, body: { planExpireAt: null } });
  assert.equal(forever.body.data.planExpireAt, null);
  assert.equal((await t.api('GET', '/api/v1/me/plan', { token: u.key })).body.data.active, true);

  const cleared = await t.api('PATCH', path, { token: t.adminKey, body: { planId: null } });
  assert.deepEqual([cleared.body.data.planId, cleared.body.data.planExpireAt], [null, null]);

  assert.equal((await t.api('PATCH', path, { token: t.adminKey, body: { planId: 'gold' } })).status, 400);
  assert.equal((await t.api('PATCH', path, { token: t.adminKey, body: { planExpireAt: 'soon' } })).status, 400);
  assert.equal((await t.api('PATCH', path, { token: t.adminKey, body: { plan: 'pro' } })).status, 400);
  assert.equal((await t.api('PATCH', '/api/v1/admin/users/usr_nobody/plan', { token: t.adminKey, body: { planId: 'pro' } })).status, 404);
  const asUser = await t.api('PATCH', path, { token: u.key, body: { planId: 'pro' } });
  assert.deepEqual([asUser.status, asUser.body.code], [403, '4031']);
});

test('concurrent spends never overdraw: exactly as many succeed as the balance allows', async () => {
  const u = await t.user();
  await grant(u.id, { qty: 60 }); // 60,000 tokens: two pro months
  const tries = await Promise.all(
    Array.from({ length: 5 }, () => t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } })),
  );
  const statuses = tries.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 201, 429, 429, 429]);
  const bal = await t.api('GET', '/api/v1/me/balance', { token: u.key });
  assert.equal(bal.body.data.balance, 60000 - 2 * 30000 + 20000, 'two months paid; the first month\'s tokens granted once');
  const led = await t.api('GET', '/api/v1/me/ledger', { token: u.key });
  const sum = led.body.data.items.reduce((s: number, e: any) => s + e.amount, 0);
  assert.equal(sum, 20000, 'the ledger adds up to the balance');
});
