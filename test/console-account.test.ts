// The Account page in a real Chromium: balance, ledger and trend; an API key
// shown once (and working); a token pack bought through the hub's sandbox
// payment page, after which the balance rises by the pack's tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { closeConsoleTest, answerNextDialog, noBrowser, openConsole, shot, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

const balanceOf = async () => Number(await tab.page.locator('[data-balance]').getAttribute('data-balance'));

before(async () => {
  if (skip) return;
  t = await startTestHub({ starterTokens: 5000 }); // the sandbox pay page is the test hub's default channel
  u = await t.user('buyer');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

test('the account page shows the balance, the ledger and the trend', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByRole('heading', { name: 'Account' }).waitFor();
  await page.locator('[data-balance="5000"]').waitFor();
  const ledger = page.getByRole('table', { name: 'Ledger' });
  await ledger.getByRole('cell', { name: 'grant' }).waitFor();
  await ledger.getByRole('cell', { name: '+5,000' }).waitFor();
  await page.getByRole('img', { name: 'Tokens received and spent per day' }).locator('canvas').first().waitFor();
  await page.getByText('No orders yet.').waitFor();
  await page.getByText('No redemptions yet.').waitFor();
  assert.deepEqual(tab.pageErrors, []);
});

test('a new API key is shown once, works, and is gone from the page after Done', { skip }, async () => {
  const { page } = tab;
  const keys = page.locator('section[aria-labelledby="keys-h"]');
  await keys.getByLabel('Name').fill('ci key');
  await keys.getByRole('button', { name: 'Create key' }).click();
  const key = (await keys.locator('[data-new-key]').textContent())!.trim();
  assert.match(key, /^ahk_/);
  assert.equal((await t.api('GET', '/api/v1/me', { token: key })).status, 200, 'the key shown signs in');
  await keys.getByRole('table', { name: 'API keys' }).getByRole('cell', { name: 'ci key' }).waitFor();
  await keys.getByRole('button', { name: 'Done' }).click();
  assert.ok(!(await page.content()).includes(key), 'the key is not on the page any more');
  assert.deepEqual(tab.pageErrors, []);
});

test('refreshing or deleting an API key asks first: dismissed, nothing changes; accepted, the old key stops working', { skip }, async () => {
  const { page } = tab;
  const spare = await t.client(u.key).keys.create('spare key');
  await page.reload();
  const keys = page.locator('section[aria-labelledby="keys-h"]');
  const row = keys.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'spare key' });
  await row.waitFor();
  const status = async (key: string) => (await t.api('GET', '/api/v1/me', { token: key })).status;

  let asked = answerNextDialog(page, false);
  await row.getByRole('button', { name: 'Refresh' }).click();
  assert.equal(asked(), 'Refresh “spare key”? The old key stops working at once.');
  assert.equal(await status(spare.key), 200, 'a dismissed refresh leaves the key working');

  asked = answerNextDialog(page, true);
  await row.getByRole('button', { name: 'Refresh' }).click();
  const fresh = (await keys.locator('[data-new-key]').textContent())!.trim();
  assert.notEqual(fresh, spare.key);
  assert.deepEqual([await status(spare.key), await status(fresh)], [401, 200]);
  await keys.getByRole('button', { name: 'Done' }).click();

  asked = answerNextDialog(page, false);
  await row.getByRole('button', { name: 'Delete' }).click();
  assert.equal(asked(), 'Delete “spare key”?');
  assert.equal(await status(fresh), 200, 'a dismissed delete leaves the key working');

  answerNextDialog(page, true);
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal(await status(fresh), 401);
  assert.equal(await status(u.key), 200, "the tab's own key untouched");
  assert.deepEqual(tab.pageErrors, []);
});

test('buying a token pack: the sandbox payment page pays the order and the balance rises', { skip }, async () => {
  const { page, context } = tab;
  const packs = (await t.api('GET', '/api/v1/token-packs')).body.data;
  const pack = packs.items.find((p: any) => p.default) ?? packs.items[0];
  const before = await balanceOf();
  const buy = page.locator('section[aria-labelledby="buy-h"]');
  await buy.getByLabel('Pack').selectOption(pack.id);
  await buy.getByRole('button', { name: 'Buy' }).click();
  await buy.getByRole('status').filter({ hasText: 'Waiting for the payment' }).waitFor();
  await shot(page, 'account-payment');
  const [pay] = await Promise.all([context.waitForEvent('page'), buy.getByRole('link', { name: 'Open the payment page' }).click()]);
  await pay.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
  await pay.getByRole('button', { name: 'Pay' }).click();
  await pay.getByRole('heading', { name: 'Paid' }).waitFor();
  await pay.close();
  // Back in the console: the order settles (polled) and the balance, ledger and orders follow.
  await buy.getByText(`Paid: ${pack.tokens.toLocaleString('en-US')} tokens added`).waitFor();
  await page.locator(`[data-balance="${before + pack.tokens}"]`).waitFor();
  await page.getByRole('table', { name: 'Ledger' }).getByRole('cell', { name: 'purchase' }).waitFor();
  await page.getByRole('table', { name: 'Orders' }).getByText('paid', { exact: true }).waitFor();
  assert.equal((await t.api('GET', '/api/v1/me/balance', { token: u.key })).body.data.balance, before + pack.tokens);
  await shot(page, 'account');
  assert.deepEqual(tab.pageErrors, []);
});

test('buying a plan: the sandbox payment page pays the order and the plan shown changes', { skip }, async () => {
  const { page, context } = tab;
  const plan = (await t.api('GET', '/api/v1/plans')).body.data.items.find((p: any) => !p.free);
  const plans = page.locator('section[aria-labelledby="plans-h"]');
  await plans.getByLabel('Cycle').selectOption('month');
  await plans.getByRole('button', { name: `Subscribe to ${plan.name}` }).click();
  await plans.getByRole('status').filter({ hasText: 'Waiting for the payment' }).waitFor();
  // Listed under Orders at once, pending.
  await page.getByRole('table', { name: 'Orders' }).getByRole('row').filter({ hasText: `${plan.name} × 1 (month)` }).getByText('pending', { exact: true }).waitFor();
  const [pay] = await Promise.all([context.waitForEvent('page'), plans.getByRole('link', { name: 'Open the payment page' }).click()]);
  await pay.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
  await pay.getByRole('button', { name: 'Pay' }).click();
  await pay.getByRole('heading', { name: 'Paid' }).waitFor();
  await pay.close();
  await plans.getByText(`Paid: ${plan.name} (month) is your plan now.`).waitFor();
  await page.locator('section[aria-labelledby="plan-h"]').getByText(plan.name, { exact: true }).waitFor();
  const mine = (await t.api('GET', '/api/v1/me/plan', { token: u.key })).body.data;
  assert.equal(mine.planId, plan.id);
  assert.equal(mine.active, true);
  await shot(page, 'account-plan');
  assert.deepEqual(tab.pageErrors, []);
});
