// The Account page's money history in a real Chromium, beyond the first look
// (console-account): the balance card's totals, the ledger in pages of ten
// with each entry's sign, balance after and note, its type and range filters,
// and the trend chart's range and totals — against entries made through the
// API (one moved back in time in the database: the API makes no old entries).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { eventually } from './helpers/host.js';
import { closeConsoleTest, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

const STARTER = 5000;

before(async () => {
  if (skip) return;
  t = await startTestHub({ starterTokens: STARTER });
  u = await t.user('ledger-user');
  for (let i = 0; i < 10; i++) await t.admin.admin.grantTokens(u.id, 1); // ten grants of 1,000
  await t.client(u.key).billing.redeem('coffee-voucher'); // one entry of −2,000
  // The starter grant, 40 days old: outside "Last 30d" and the 30-day trend, inside 90 days.
  await t.hub.ctx.em().getConnection().execute(`update ledger_entries set created_at = now() - interval '40 days' where user_id = ? and amount = ?`, [u.id, STARTER]);
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

const n = (x: number) => x.toLocaleString('en-US');
const section = (id: string) => tab.page.locator(`section[aria-labelledby="${id}"]`);
const rows = () => section('ledger-h').getByRole('table', { name: 'Ledger' }).locator('tbody tr');
const eventuallyCount = (want: number) => eventually(async () => (await rows().count()) === want, 5000, 50);

test("the balance card's totals; the ledger in pages of ten, each entry with its sign, balance after and note", { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/account`);
  await page.getByText('ledger-user · user').waitFor();
  const b = await t.client(u.key).billing.balance();
  await page.locator(`[data-balance="${b.balance}"]`).waitFor();
  assert.ok(b.totalSpent > 0 && b.totalIncome !== b.totalSpent);
  await section('balance-h').getByText(`Received ${n(b.totalIncome)} · spent ${n(b.totalSpent)} ·`).waitFor();

  const pages = page.getByRole('navigation', { name: 'Ledger pages' });
  await pages.getByText('Page 1 of 2').waitFor();
  assert.equal(await rows().count(), 10);
  const first = (await t.client(u.key).billing.ledger({ pageSize: 10 })).items[0];
  assert.equal(first.type, 'redeem', 'the newest entry');
  const cells = await rows().first().locator('td').allTextContents();
  assert.deepEqual(cells.slice(1), ['redeem', n(first.amount), n(first.balanceAfter), first.note ?? first.ref ?? '']);
  assert.ok(first.amount < 0 && cells[2].startsWith('-') && !cells[2].startsWith('+'));
  assert.ok(cells[4].length > 0, "the entry's note or reference is shown");
  assert.match((await rows().nth(1).locator('td').allTextContents())[2], /^\+1,000$/, 'an income has its plus sign');

  await pages.getByRole('button', { name: 'Next' }).click();
  await pages.getByText('Page 2 of 2').waitFor();
  await eventuallyCount(2);
  assert.ok(await pages.getByRole('button', { name: 'Next' }).isDisabled(), 'the last page');
});

test('the type and range filters narrow the ledger and go back to its first page', { skip }, async () => {
  const ledger = section('ledger-h');
  await ledger.getByText('Page 2 of 2').waitFor(); // where the test above left it
  await ledger.getByLabel('Type').selectOption('redeem');
  await eventuallyCount(1);
  assert.match((await rows().first().locator('td').allTextContents())[2], /^-2,000$/);
  assert.equal(await ledger.getByRole('navigation', { name: 'Ledger pages' }).count(), 0, 'one page: no pager');

  await ledger.getByLabel('Type').selectOption('refund');
  await ledger.getByText('No ledger entries.').waitFor();

  await ledger.getByLabel('Type').selectOption('grant');
  await ledger.getByText('Page 1 of 2').waitFor(); // eleven grants, all time
  await ledger.getByLabel('Range').selectOption('30d');
  // The 40-day-old grant is out of range: ten grants, one page.
  await ledger.getByRole('navigation', { name: 'Ledger pages' }).waitFor({ state: 'detached' });
  await eventuallyCount(10);
  assert.equal(await ledger.getByRole('cell', { name: `+${n(STARTER)}` }).count(), 0);
});

test('the trend counts the range chosen; a range without movements says so', { skip }, async () => {
  const trend = section('trend-h');
  await trend.getByText(`In this range: received ${n(10_000)}, spent ${n(2000)}.`).waitFor();
  await trend.getByLabel('Range').selectOption('90d');
  await trend.getByText(`In this range: received ${n(10_000 + STARTER)}, spent ${n(2000)}.`).waitFor();
  await trend.getByRole('img', { name: 'Tokens received and spent per day' }).waitFor();

  await t.hub.ctx.em().getConnection().execute(`update ledger_entries set created_at = now() - interval '20 days' where user_id = ?`, [u.id]);
  await tab.page.reload();
  await trend.getByLabel('Range').selectOption('7d');
  await trend.getByText('No token movements in this range.').waitFor();
  assert.equal(await trend.getByRole('img', { name: 'Tokens received and spent per day' }).count(), 0);
});
