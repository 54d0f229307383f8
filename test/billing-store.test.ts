// The store and redemption requests, from both sides.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import { ApiError, type RedeemParams } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

async function richUser(qty = 20) {
  const u = await t.user();
  await t.admin.admin.grantTokens(u.id, qty);
  return u;
}
const product = async (id: string) => (await t.client().billing.products()).items.find((p) => p.id === id)!;
const stockOf = async (id: string) => (await product(id)).stock;

test('products are listed with token prices and stock, anonymously', async () => {
  const { items } = await t.client().billing.products();
  assert.ok(items.length >= 3);
  const p = items[0];
  assert.equal(typeof p.priceTokens, 'number');
  assert.equal(typeof p.stock, 'number');
  assert.equal(p.available, true);
});

test('redeem spends tokens through the ledger, takes stock, and creates a pending request', async () => {
  const u = await richUser(20);
  const c = t.client(u.key);
  const before = (await stockOf('coffee-voucher'))!; // the coffee voucher has a stock
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
  const c = t.client(u.key);
  const before = await stockOf('book-card-50');
  await assert.rejects(c.billing.redeem('book-card-50'), apiError(429, '4091'));
  assert.equal(await stockOf('book-card-50'), before, 'stock comes back when the spend fails');
  assert.equal((await c.billing.redeems()).total, 0);
  await assert.rejects(c.billing.redeem('book-card-50', 0), apiError(400));
  await assert.rejects(c.billing.redeem('book-card-50', 11), apiError(400));
  await assert.rejects(c.billing.redeem(undefined as unknown as string, 1), apiError(400)); // {"qty":1}
  await assert.rejects(c.billing.redeem(''), apiError(400));
  // Raw: an unknown field the client cannot send.
  assert.equal((await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'book-card-50', x: 1 } })).status, 400);
  await assert.rejects(c.billing.redeem('unicorn'), apiError(404));
  await assert.rejects(t.client().billing.redeem('book-card-50'), apiError(401));
});

test('out of stock → 409', async () => {
  const u = await richUser(100);
  const c = t.client(u.key);
  // The catalogue has no stock endpoint: lower the stock in the database, then ask for more than is left.
  await t.hub.ctx.em().execute(`update products set stock = 2 where id = 'cloud-credit-100'`);
  await assert.rejects(c.billing.redeem('cloud-credit-100', 3), apiError(409, '4090'));
  assert.equal((await c.billing.balance()).balance, 100000);
  // Raw: checks the 201 status itself.
  assert.equal((await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'cloud-credit-100', qty: 2 } })).status, 201);
  assert.equal(await stockOf('cloud-credit-100'), 0);
  assert.equal((await product('cloud-credit-100')).available, false);
});

test('redemptions at once never take more than the stock; a disabled product is not redeemable', async () => {
  const db = t.hub.ctx.em().getConnection();
  await db.execute(`insert into products (id, name, description, price_tokens, stock, enabled, sort) values ('race-card', 'Race card', '', 1000, 3, true, 99)`);
  const users = await Promise.all(Array.from({ length: 8 }, () => richUser(1)));
  const tries = await Promise.allSettled(users.map((u) => t.client(u.key).billing.redeem('race-card')));
  assert.equal(tries.filter((r) => r.status === 'fulfilled').length, 3, 'three of eight, as the stock said');
  for (const r of tries) if (r.status === 'rejected') assert.ok(r.reason instanceof ApiError && r.reason.status === 409, String(r.reason));
  assert.equal(await stockOf('race-card'), 0);
  const balances = await Promise.all(users.map(async (u) => (await t.client(u.key).billing.balance()).balance));
  assert.deepEqual(balances.sort(), [0, 0, 0, 1000, 1000, 1000, 1000, 1000], 'only the three who got one paid');

  await db.execute(`update products set stock = null, enabled = false where id = 'race-card'`);
  const late = users[0];
  const before = (await t.client(late.key).billing.balance()).balance;
  await assert.rejects(t.client(late.key).billing.redeem('race-card'), apiError(404));
  assert.equal((await t.client(late.key).billing.balance()).balance, before);
  assert.equal(await product('race-card'), undefined, 'not listed either');
  await db.execute(`delete from products where id = 'race-card'`);
});

test('delivery: admin delivers cards, the owner sees it unread, marks it read, and reveals the cards', async () => {
  const u = await richUser(10);
  const c = t.client(u.key);
  const adm = t.admin.admin;
  const { id } = await c.billing.redeem('coffee-voucher', 2);

  await assert.rejects(c.billing.cards(id), apiError(409), 'no cards before delivery');

  assert.ok((await adm.redeemsSummary()).pending >= 1);
  const pendingList = await adm.redeems({ status: 'pending', userId: u.id });
  const name = (await c.me()).name;
  assert.deepEqual(pendingList.items.map((x) => [x.id, x.userId, x.userName]), [[id, u.id, name]], 'whose it is, by name for the administrator');
  assert.deepEqual([(await adm.redemption(id)).userId, (await adm.redemption(id)).userName], [u.id, name]);

  await assert.rejects(adm.deliverRedeem(id, []), apiError(400));
  await assert.rejects(adm.deliverRedeem(id, [{}]), apiError(400));
  await assert.rejects(adm.deliverRedeem(id, [{ no: 'A', cvv: '1' } as { no: string }]), apiError(400));
  // Raw: no body at all.
  assert.equal((await t.api('POST', `/api/v1/admin/redeems/${id}/deliver`, { token: t.adminKey })).status, 400);
  const d = await adm.deliverRedeem(id, [{ no: 'CARD-0001', pwd: 'secret-1' }, { pwd: 'secret-2' }]);
  assert.deepEqual([d.status, d.cardCount], ['delivered', 2]);
  assert.ok(!JSON.stringify(d).includes('secret-1'), 'the admin view does not echo card secrets');
  await assert.rejects(adm.deliverRedeem(id, [{ no: 'x' }]), apiError(409));
  await assert.rejects(adm.rejectRedeem(id, 'late'), apiError(409));

  const stored = await t.hub.ctx.em().execute(`select cards_enc from redemptions where id = ?`, [id]);
  assert.ok(!stored[0].cards_enc.includes('secret-1'), 'cards are stored encrypted');

  const unread = await c.billing.redeems({ read: false });
  assert.deepEqual(unread.items.map((x) => x.id), [id]);
  const got = await c.billing.redemption(id);
  assert.deepEqual([got.status, got.read], ['delivered', false]);
  assert.ok(!JSON.stringify(got).includes('secret-1'));
  const read = await c.billing.markRead(id);
  assert.equal(read.read, true);
  assert.equal((await c.billing.redeems({ read: false })).total, 0);

  const cards = await c.billing.cards(id);
  assert.deepEqual(cards.cards, [{ no: 'CARD-0001', pwd: 'secret-1' }, { no: null, pwd: 'secret-2' }]);
  const adminCards = await adm.redemptionCards(id);
  assert.deepEqual(adminCards.cards, cards.cards);
  // Raw: no body, and an unknown field, neither of which the client sends.
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key })).status, 400, 'the body is required');
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${id}/cards`, { token: u.key, body: { verifyToken: 'x', y: 1 } })).status, 400);
});

test('reject: tokens refunded through the ledger, stock restored, reason shown', async () => {
  const u = await richUser(10);
  const c = t.client(u.key);
  const adm = t.admin.admin;
  const stock = await stockOf('coffee-voucher');
  const { id } = await c.billing.redeem('coffee-voucher', 2);
  await assert.rejects(adm.rejectRedeem(id, ''), apiError(400));
  await assert.rejects(adm.rejectRedeem(id, undefined as unknown as string), apiError(400)); // {}
  const rej = await adm.rejectRedeem(id, 'region not supported');
  assert.deepEqual([rej.status, rej.rejectReason], ['rejected', 'region not supported']);
  await assert.rejects(adm.rejectRedeem(id, 'again'), apiError(409));
  assert.equal(await stockOf('coffee-voucher'), stock);
  assert.equal((await c.billing.balance()).balance, 10000);
  const led = await c.billing.ledger({ type: 'refund' });
  assert.deepEqual([led.items[0].amount, led.items[0].ref, led.items[0].balanceAfter], [4000, id, 10000]);
  const mine = await c.billing.redeems({ status: 'rejected', read: false });
  assert.equal(mine.items[0].rejectReason, 'region not supported');
  await assert.rejects(c.billing.cards(id), apiError(409));
  const sum = await adm.redeemsSummary();
  assert.ok(sum.rejected >= 1 && sum.delivered >= 0 && sum.total >= sum.pending);
});

test("another account's redemption is a 404; admin paths need the role; list filters are validated", async () => {
  const a = await richUser(5);
  const ca = t.client(a.key);
  const cb = t.client((await t.user()).key);
  const { id } = await ca.billing.redeem('coffee-voucher');
  await assert.rejects(cb.billing.redemption(id), apiError(404));
  await assert.rejects(cb.billing.markRead(id), apiError(404));
  await assert.rejects(cb.billing.cards(id), apiError(404));
  assert.equal((await cb.billing.redeems()).total, 0);
  for (const q of [{ status: 'done' }, { read: 'maybe' }, { range: '2d' }, { pageSize: 0 }]) {
    await assert.rejects(ca.billing.redeems(q as RedeemParams), apiError(400), JSON.stringify(q));
  }
  assert.equal((await ca.billing.redeems({ range: '7d', status: 'pending', read: true, page: 1, pageSize: 5 })).total, 1);
  const notAdmin = ca.admin;
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['summary', () => notAdmin.redeemsSummary()], ['list', () => notAdmin.redeems()], ['one', () => notAdmin.redemption(id)],
    ['deliver', () => notAdmin.deliverRedeem(id, [{ no: '1' }])], ['reject', () => notAdmin.rejectRedeem(id, 'x')],
    ['cards', () => notAdmin.redemptionCards(id)],
  ];
  for (const [name, call] of calls) await assert.rejects(call(), apiError(403, '4031'), name);
  await assert.rejects(t.admin.admin.redemption('rdm_missing'), apiError(404));
  await assert.rejects(t.admin.admin.deliverRedeem('rdm_missing', [{ no: '1' }]), apiError(404));
  await assert.rejects(t.admin.admin.rejectRedeem('rdm_missing', 'x'), apiError(404));
});

test("a deleted account's pending redemptions give their stock back; delivered ones do not", async () => {
  const u = await richUser(10);
  const c = t.client(u.key);
  const stock = (await stockOf('coffee-voucher'))!;
  const kept = await c.billing.redeem('coffee-voucher', 1);
  await t.admin.admin.deliverRedeem(kept.id, [{ no: 'C-1' }]);
  await c.billing.redeem('coffee-voucher', 2);
  await c.billing.redeem('coffee-voucher', 1);
  assert.equal(await stockOf('coffee-voucher'), stock - 4);
  await t.admin.admin.deleteUser(u.id);
  // Before: the pending requests went with the account (on delete cascade) and their 3 units never came back.
  assert.equal(await stockOf('coffee-voucher'), stock - 1, 'the pending units are back, the delivered one stays gone');
});
