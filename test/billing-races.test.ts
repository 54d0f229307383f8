// Audit (billing, forty-fifth session): races that must not double-grant (they held). Run on PostgreSQL for real concurrency.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => { t = await startTestHub({ starterTokens: 0 }); });
after(() => t.close());

const bal = async (key: string) => (await t.client(key).billing.balance()).balance;

test('eight concurrent rejects of one redemption refund once', async () => {
  const u = await t.user();
  await t.admin.admin.grantTokens(u.id, 2);
  const r = await t.client(u.key).billing.redeem('coffee-voucher', 1);
  assert.equal(await bal(u.key), 0);
  const res = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', `/api/v1/admin/redeems/${r.id}/reject`, { token: t.adminKey, body: { reason: 'no' } })));
  assert.deepEqual(res.map((x) => x.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
  assert.equal(await bal(u.key), 2000);
});

test('concurrent deliver and reject: exactly one wins', async () => {
  const u = await t.user();
  await t.admin.admin.grantTokens(u.id, 2);
  const r = await t.client(u.key).billing.redeem('coffee-voucher', 1);
  const res = await Promise.all([
    ...Array.from({ length: 4 }, () => t.api('POST', `/api/v1/admin/redeems/${r.id}/deliver`, { token: t.adminKey, body: { cards: [{ no: 'x' }] } })),
    ...Array.from({ length: 4 }, () => t.api('POST', `/api/v1/admin/redeems/${r.id}/reject`, { token: t.adminKey, body: { reason: 'no' } })),
  ]);
  assert.equal(res.filter((x) => x.status === 200).length, 1, res.map((x) => x.status).join());
  const now = await t.client(u.key).billing.redemption(r.id);
  assert.equal(await bal(u.key), now.status === 'rejected' ? 2000 : 0);
});

test('concurrent redeems never oversell stock', async () => {
  const stock = (await t.client().billing.products()).items.find((p) => p.id === 'cloud-credit-100')!.stock!;
  const n = Math.floor(stock / 10) + 5;
  const users = await Promise.all(Array.from({ length: n }, () => t.user()));
  await Promise.all(users.map((u) => t.admin.admin.grantTokens(u.id, 100)));
  const res = await Promise.all(users.map((u) => t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'cloud-credit-100', qty: 10 } })));
  assert.equal(res.filter((x) => x.status === 201).length, Math.floor(stock / 10));
  assert.ok(res.every((x) => x.status === 201 || x.status === 409), res.map((x) => x.status).join());
});

test('confirm-payment racing itself: tokens credited once', async () => {
  const u = await t.user();
  const o = await t.client(u.key).billing.buyTokenPack({ packId: 'pack-1k', payMethod: 'alipay' });
  const res = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', `/api/v1/admin/orders/${o.id}/confirm-payment`, { token: t.adminKey, body: {} })));
  assert.equal(res.filter((x) => x.status === 200).length, 1, res.map((x) => x.status).join());
  assert.equal(await bal(u.key), 1000);
});
