// The store and redemption requests, from both sides.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { createClient } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

const admin = (method: string, path: string, body?: unknown) => t.api(method, path, { token: t.adminKey, ...(body === undefined ? {} : { body }) });
async function richUser(qty = 20) {
  const u = await t.user();
  await admin('POST', `/api/v1/admin/users/${u.id}/grant-token`, { qty });
  return u;
}
const stockOf = async (id: string) => (await t.api('GET', '/api/v1/store/products')).body.data.items.find((p: any) => p.id === id).stock;

test('products are listed with token prices and stock, anonymously', async () => {
  const { items } = await createClient({ baseUrl: t.url }).billing.products();
  assert.ok(items.length >= 3);
  const p = items[0];
  assert.equal(typeof p.priceTokens, 'number');
  assert.equal(typeof p.stock, 'number');
  assert.equal(p.available, true);
});

test('redeem spends tokens through the ledger, takes stock, and creates a pending request', async () => {
  const u = await richUser(20);
  const c = createClient({ baseUrl: t.url, token: u.key });
  const before = await stockOf('coffee-voucher');
  const r = await c.billing.redeem('coffee-voucher', 3);
  assert.deepEqual([r.status, r.qty, r.tokens, r.read, r.cardCount], ['pending', 3, 6000, true, 0]);
  assert.equal(await stockOf('coffee-voucher'), before - 3);
  assert.equal((await c.billing.balance()).balance, 14000);
  const led = await c.billing.ledger({ type: 'redeem' });
  assert.deepEqual([led.items[0].amount, led.items[0].ref], [-6000, r.id]);

  const one = await c.billing.redemption(r.id);
  assert.equal(one.productName, 'Coffee voucher');
  const list = await c.billing.redeems({ status: 'pending' });
  assert.equal(list.total, 1);
  const dflt = await c.billing.redeem('coffee-voucher');
  assert.equal(dflt.qty, 1);
});

test('redeem errors: short balance 4091 (nothing taken), bad qty 400, unknown product 404, no credentials 401', async () => {
  const u = await t.user();
  const before = await stockOf('book-card-50');
  const r = await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'book-card-50' } });
  assert.deepEqual([r.status, r.body.code], [429, '4091']);
  assert.equal(await stockOf('book-card-50'), before, 'stock comes back when the spend fails');
  assert.equal((await t.api('GET', '/api/v1/me/redeems', { token: u.key })).body.data.total, 0);
  for (const body of [{ productId: 'book-card-50', qty: 0 }, { productId: 'book-card-50', qty: 11 }, { qty: 1 }, { productId: 'book-card-50', x: 1 }, { productId: '' }]) {
    assert.equal((await t.api('POST', '/api/v1/store/redeem', { token: u.key, body })).status, 400, JSON.stringify(body));
  }
  assert.equal((await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'unicorn' } })).status, 404);
  assert.equal((await t.api('POST', '/api/v1/store/redeem', { body: { productId: 'book-card-50' } })).status, 401);
});

test('out of stock → 409', async () => {
  const u = await richUser(100);
  // The catalogue has no stock endpoint: lower the stock in the database, then ask for more than is left.
  await t.hub.ctx.em().execute(`update products set stock = 2 where id = 'cloud-credit-100'`);
  const r = await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'cloud-credit-100', qty: 3 } });
  assert.equal(r.status, 409);
  assert.equal(r.body.code, '4090');
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 100000);
  assert.equal((await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'cloud-credit-100', qty: 2 } })).status, 201);
  assert.equal(await stockOf('cloud-credit-100'), 0);
  const p = (await t.api('GET', '/api/v1/store/products')).body.data.items.find((x: any) => x.id === 'cloud-credit-100');
  assert.equal(p.available, false);
});

test('delivery: admin delivers cards, the owner sees it unread, marks it read, and reveals the cards', async () => {
  const u = await richUser(10);
  const r = await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'coffee-voucher', qty: 2 } });
  const id = r.body.data.id;

  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key, body: {} })).status, 409, 'no cards before delivery');

  const summary0 = await admin('GET', '/api/v1/admin/redeems/summary');
  assert.ok(summary0.body.data.pending >= 1);
  const pendingList = await admin('GET', `/api/v1/admin/redeems?status=pending&userId=${u.id}`);
  assert.deepEqual(pendingList.body.data.items.map((x: any) => [x.id, x.userId]), [[id, u.id]]);
  assert.equal((await admin('GET', `/api/v1/admin/redeems/${id}`)).body.data.userId, u.id);

  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [] })).status, 400);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [{}] })).status, 400);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [{ no: 'A', cvv: '1' }] })).status, 400);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/deliver`)).status, 400);
  const d = await admin('POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [{ no: 'CARD-0001', pwd: 'secret-1' }, { pwd: 'secret-2' }] });
  assert.equal(d.status, 200);
  assert.deepEqual([d.body.data.status, d.body.data.cardCount], ['delivered', 2]);
  assert.ok(!JSON.stringify(d.body).includes('secret-1'), 'the admin view does not echo card secrets');
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [{ no: 'x' }] })).status, 409);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/reject`, { reason: 'late' })).status, 409);

  const stored = await t.hub.ctx.em().execute(`select cards_enc from redemptions where id = ?`, [id]);
  assert.ok(!stored[0].cards_enc.includes('secret-1'), 'cards are stored encrypted');

  const unread = await t.api('GET', '/api/v1/me/redeems?read=false', { token: u.key });
  assert.deepEqual(unread.body.data.items.map((x: any) => x.id), [id]);
  const got = await t.api('GET', `/api/v1/me/redeems/${id}`, { token: u.key });
  assert.deepEqual([got.body.data.status, got.body.data.read], ['delivered', false]);
  assert.ok(!JSON.stringify(got.body).includes('secret-1'));
  const read = await t.api('PATCH', `/api/v1/me/redeems/${id}/read`, { token: u.key });
  assert.equal(read.body.data.read, true);
  assert.equal((await t.api('GET', '/api/v1/me/redeems?read=false', { token: u.key })).body.data.total, 0);

  const cards = await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key, body: {} });
  assert.equal(cards.status, 200);
  assert.deepEqual(cards.body.data.cards, [{ no: 'CARD-0001', pwd: 'secret-1' }, { no: null, pwd: 'secret-2' }]);
  const adminCards = await admin('POST', `/api/v1/admin/redeems/${id}/cards`, {});
  assert.deepEqual(adminCards.body.data.cards, cards.body.data.cards);
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key })).status, 400, 'the body is required');
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key, body: { verifyToken: 'x', y: 1 } })).status, 400);
});

test('reject: tokens refunded through the ledger, stock restored, reason shown', async () => {
  const u = await richUser(10);
  const stock = await stockOf('coffee-voucher');
  const r = await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'coffee-voucher', qty: 2 } });
  const id = r.body.data.id;
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/reject`, { reason: '' })).status, 400);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/reject`, {})).status, 400);
  const rej = await admin('POST', `/api/v1/admin/redeems/${id}/reject`, { reason: 'region not supported' });
  assert.equal(rej.status, 200);
  assert.deepEqual([rej.body.data.status, rej.body.data.rejectReason], ['rejected', 'region not supported']);
  assert.equal((await admin('POST', `/api/v1/admin/redeems/${id}/reject`, { reason: 'again' })).status, 409);
  assert.equal(await stockOf('coffee-voucher'), stock);
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, 10000);
  const led = await t.api('GET', '/api/v1/me/ledger?type=refund', { token: u.key });
  assert.deepEqual([led.body.data.items[0].amount, led.body.data.items[0].ref, led.body.data.items[0].balanceAfter], [4000, id, 10000]);
  const mine = await t.api('GET', '/api/v1/me/redeems?status=rejected&read=false', { token: u.key });
  assert.equal(mine.body.data.items[0].rejectReason, 'region not supported');
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key, body: {} })).status, 409);
  const sum = await admin('GET', '/api/v1/admin/redeems/summary');
  assert.ok(sum.body.data.rejected >= 1 && sum.body.data.delivered >= 0 && sum.body.data.total >= sum.body.data.pending);
});

test("another account's redemption is a 404; admin paths need the role; list filters are validated", async () => {
  const a = await richUser(5);
  const b = await t.user();
  const r = await t.api('POST', '/api/v1/store/redeem', { token: a.key, body: { productId: 'coffee-voucher' } });
  const id = r.body.data.id;
  assert.equal((await t.api('GET', `/api/v1/me/redeems/${id}`, { token: b.key })).status, 404);
  assert.equal((await t.api('PATCH', `/api/v1/me/redeems/${id}/read`, { token: b.key })).status, 404);
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: b.key, body: {} })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/me/redeems', { token: b.key })).body.data.total, 0);
  for (const q of ['status=done', 'read=maybe', 'range=2d', 'pageSize=0']) {
    assert.equal((await t.api('GET', `/api/v1/me/redeems?${q}`, { token: a.key })).status, 400, q);
  }
  assert.equal((await t.api('GET', '/api/v1/me/redeems?range=7d&status=pending&read=true&page=1&pageSize=5', { token: a.key })).body.data.total, 1);
  for (const [m, p, body] of [
    ['GET', '/api/v1/admin/redeems/summary'], ['GET', '/api/v1/admin/redeems'], ['GET', `/api/v1/admin/redeems/${id}`],
    ['POST', `/api/v1/admin/redeems/${id}/deliver`, { cards: [{ no: '1' }] }], ['POST', `/api/v1/admin/redeems/${id}/reject`, { reason: 'x' }],
    ['POST', `/api/v1/admin/redeems/${id}/cards`, {}],
  ] as const) {
    const res = await t.api(m, p, { token: a.key, body });
    assert.deepEqual([res.status, res.body.code], [403, '4031'], p);
  }
  assert.equal((await admin('GET', '/api/v1/admin/redeems/rdm_missing')).status, 404);
  assert.equal((await admin('POST', '/api/v1/admin/redeems/rdm_missing/deliver', { cards: [{ no: '1' }] })).status, 404);
  assert.equal((await admin('POST', '/api/v1/admin/redeems/rdm_missing/reject', { reason: 'x' })).status, 404);
});
