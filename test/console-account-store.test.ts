// The Account page's buying and store in a real Chromium, beyond the first
// look (console-account): a plan paid from the token balance (prices in
// tokens, the cycle chosen, the plan card with its end, the order listed in
// tokens), an expired plan named, token packs in quantity, the store's stock
// and a sold-out product, the stock followed after a redemption and after one
// refused, redemptions marked read or rejected with a reason (API keys in
// detail: console-account-keys).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { closeConsoleTest, answerNextDialog, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

before(async () => {
  if (skip) return;
  t = await startTestHub({ starterTokens: 200_000 });
  u = await t.user('shopper');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
  await tab.page.goto(`${t.url}/account`);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] }); // a redemption refused
});

const n = (x: number) => x.toLocaleString('en-US');
const section = (id: string) => tab.page.locator(`section[aria-labelledby="${id}"]`);
const DAY = 86_400_000;

test('a plan paid from the token balance: prices in tokens, the cycle chosen, the order in tokens, the plan card with its end', { skip }, async () => {
  const plans = section('plans-h');
  const pro = plans.locator('li[data-plan="pro"]');
  await pro.getByText('CNY 30.00 per month').waitFor();
  await pro.getByText(`${n(20_000)} tokens a month included`).waitFor();
  assert.equal(await plans.getByRole('button', { name: 'Subscribe to Free' }).count(), 0, 'the free plan is not sold');

  await plans.getByLabel('Pay with').selectOption({ label: 'token balance' });
  await plans.getByLabel('Cycle').selectOption('quarter');
  await pro.getByText(`${n(81_000)} tokens per quarter`).waitFor();
  await pro.getByText('Paid from the balance: its monthly tokens are not included').waitFor();
  const before = (await t.client(u.key).billing.balance()).balance;
  await plans.getByRole('button', { name: 'Subscribe to Pro' }).click();
  await plans.getByText('Paid: Pro (quarter) is your plan now.').waitFor();
  await plans.getByText(`= ${n(81_000)} tokens · paid`).waitFor();

  const card = section('plan-h');
  await card.getByText('Pro', { exact: true }).waitFor();
  await card.getByText('For individuals running agents every day').waitFor();
  await card.getByText(/^until /).waitFor();
  const mine = await t.client(u.key).billing.myPlan();
  assert.equal(mine.planId, 'pro');
  assert.ok(Math.abs(mine.expireAt! - (Date.now() + 90 * DAY)) < DAY, `a quarter from now: ${new Date(mine.expireAt!).toISOString()}`);
  assert.equal((await t.client(u.key).billing.balance()).balance, before - 81_000);
  const order = section('orders-h').getByRole('table', { name: 'Orders' }).getByRole('row').filter({ hasText: 'Pro × 1 (quarter)' });
  // Paid from the balance: its price in tokens (its amount in money is 0), and with what.
  await order.getByRole('cell', { name: 'token balance', exact: true }).waitFor();
  assert.equal(await order.locator('td.num').textContent(), `${n(81_000)} tokens`);
});

test('a plan that has ended is named on the plan card', { skip }, async () => {
  const r = await t.api('PATCH', `/api/v1/admin/users/${u.id}/plan`, { token: t.adminKey, body: { planId: 'team', planExpireAt: Date.now() - DAY } });
  assert.equal(r.status, 200, r.text);
  await tab.page.reload();
  const card = section('plan-h');
  await card.getByText('Free', { exact: true }).waitFor();
  await card.getByText(/^Your plan team expired /).waitFor();
});

test('token packs in quantity: the order is for that many packs', { skip }, async () => {
  const buy = section('buy-h');
  await buy.getByLabel('Quantity').fill('3');
  await buy.getByRole('button', { name: 'Buy' }).click();
  await buy.getByText('1,000 tokens × 3 = CNY 3.00').waitFor();
  const o = (await t.client(u.key).billing.orders({ pageSize: 1 })).items[0];
  assert.deepEqual([o.qty, o.amountCents, o.tokens, o.status], [3, 300, 3000, 'pending']);
  // Listed at once under Orders, pending, with its payment page.
  const row = section('orders-h').getByRole('row').filter({ has: tab.page.getByRole('link', { name: `Pay order ${o.id}` }) });
  await row.getByText('pending', { exact: true }).waitFor();
  assert.match((await row.getByRole('cell').nth(1).textContent())!, / × 3$/);
});

test('an order placed in another visit: listed pending with its payment page and its end; paid there, the list, the balance and the ledger follow', { skip }, async () => {
  const { page, context } = tab;
  const me = t.client(u.key);
  const packs = await me.billing.tokenPacks();
  const pack = packs.items.find((x) => x.default) ?? packs.items[0];
  const o = await me.billing.buyTokenPack({ packId: pack.id, qty: 1, payMethod: packs.payMethods[0] as 'alipay' });
  const before = (await me.billing.balance()).balance;
  await page.reload();
  const orders = section('orders-h');
  const row = orders.locator(`tr[data-order-id="${o.id}"]`);
  await row.getByText('pending', { exact: true }).waitFor();
  await row.getByText(`until ${new Date(o.expiresAt!).toLocaleString()}`).waitFor();
  assert.equal(await orders.getByRole('link', { name: /^Pay order / }).count(), 2, 'the pending order of the test above has its own');

  const [pay] = await Promise.all([context.waitForEvent('page'), row.getByRole('link', { name: `Pay order ${o.id}` }).click()]);
  await pay.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
  await pay.getByRole('button', { name: 'Pay' }).click();
  await pay.getByRole('heading', { name: 'Paid' }).waitFor();
  await pay.close();
  // Polled: the order reads paid with no payment page any more, and the rest of the page follows.
  await row.getByText('paid', { exact: true }).waitFor();
  assert.equal(await row.getByRole('link').count(), 0, 'no payment page once paid');
  assert.equal(await row.getByText(/^until /).count(), 0);
  await page.locator(`[data-balance="${before + pack.tokens}"]`).waitFor();
  await section('ledger-h').getByRole('cell', { name: 'purchase', exact: true }).waitFor();
  assert.equal(await orders.getByRole('link', { name: /^Pay order / }).count(), 1, 'the other still pending');
});

test('the store shows stock left and a sold-out product; a finished redemption is new until marked read, a rejected one says why', { skip }, async () => {
  const { page } = tab;
  await t.hub.ctx.em().getConnection().execute(`update products set stock = 0 where id = 'cloud-credit-100'`);
  const mine = t.client(u.key);
  const delivered = await mine.billing.redeem('coffee-voucher');
  const rejected = await mine.billing.redeem('coffee-voucher');
  await t.admin.admin.deliverRedeem(delivered.id, [{ no: 'C-1', pwd: 'P-1' }]);
  await t.admin.admin.rejectRedeem(rejected.id, 'out of stock today');
  await page.reload();

  const store = section('store-h');
  const coffee = store.getByRole('listitem').filter({ hasText: 'Coffee voucher' });
  // One voucher out, the rejected one back in stock.
  await coffee.getByText(`${n(2000)} tokens · 499 left`).waitFor();
  const cloud = store.getByRole('listitem').filter({ hasText: 'Cloud credit (100)' });
  await cloud.getByText('· 0 left').waitFor();
  assert.ok(await cloud.getByRole('button', { name: 'Sold out' }).isDisabled());

  const row = (id: string) => page.locator(`tr[data-redeem="${id}"]`);
  await row(rejected.id).getByText('out of stock today').waitFor();
  await row(delivered.id).getByText('new', { exact: true }).waitFor();
  await row(delivered.id).getByRole('button', { name: 'Mark read' }).click();
  await row(delivered.id).getByText('new', { exact: true }).waitFor({ state: 'detached' });
  assert.equal(await row(delivered.id).getByRole('button', { name: 'Mark read' }).count(), 0);
  const items = (await mine.billing.redeems()).items;
  assert.deepEqual(items.filter((x) => x.read).map((x) => x.id), [delivered.id]);
  await row(rejected.id).getByText('new', { exact: true }).waitFor();
});

test('the store follows its stock: a redemption here lowers what is left, one refused because another took the last is said and the product shown sold out', { skip }, async () => {
  const { page } = tab;
  const store = section('store-h');
  const coffee = store.getByRole('listitem').filter({ hasText: 'Coffee voucher' });
  const left = Number((await t.client(u.key).billing.products()).items.find((x) => x.id === 'coffee-voucher')!.stock);
  await coffee.getByText(`· ${left} left`).waitFor();
  answerNextDialog(page, true);
  await coffee.getByRole('button', { name: 'Redeem' }).click();
  await coffee.getByText(`· ${left - 1} left`).waitFor();

  // The last one taken elsewhere while this page still offers it.
  await t.hub.ctx.em().getConnection().execute(`update products set stock = 0 where id = 'coffee-voucher'`);
  answerNextDialog(page, true);
  await coffee.getByRole('button', { name: 'Redeem' }).click();
  await store.getByRole('alert').filter({ hasText: 'only 0 left in stock (409, code 4090)' }).waitFor();
  await coffee.getByRole('button', { name: 'Sold out' }).waitFor();
  assert.ok(await coffee.getByRole('button', { name: 'Sold out' }).isDisabled());
  await coffee.getByText('· 0 left').waitFor();
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 409')), []);
  tab.pageErrors.length = 0;
});

test('with nothing on sale (the operator took it off in the database), the plans, packs and store say so', { skip }, async () => {
  const sql = (q: string) => t.hub.ctx.em().getConnection().execute(q);
  await sql(`delete from plans where id <> 'free'`);
  await sql(`delete from token_packs`);
  await sql(`update products set enabled = false`);
  await tab.page.reload();
  await section('plans-h').getByText('No plans on sale.').waitFor();
  await section('buy-h').getByText('No token packs on sale.').waitFor();
  await section('store-h').getByText('Nothing in the store.').waitFor();
  await section('plan-h').getByText('Free', { exact: true }).waitFor();
  assert.equal(await tab.page.getByRole('alert').count(), 0, 'nothing failed');
});
