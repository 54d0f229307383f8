// The Administration page in a real Chromium: the nav link only for
// administrators; the review queue approves one agent and rejects another
// with a reason; users created, granted tokens, given a plan and deleted;
// redemptions delivered, rejected and their cards revealed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { closeConsoleTest, answerNextDialog, noBrowser, openConsole, shot, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
const ids: Record<string, string> = {};

async function submit(name: string) {
  const host = await seedHost(t, owner.id);
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, desc: `${name} agent`, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' } });
  assert.equal(c.status, 201, c.text);
  ids[name] = c.body.data.id;
}

const agent = async (id: string) => (await t.api('GET', `/api/v1/admin/agents/${encodeURIComponent(id)}/review`, { token: t.adminKey })).body.data;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('agent-owner');
  await submit('reviewme');
  await submit('rejectme');
  tab = await openConsole(t.url);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

test('a user sees no Administration link and the page says administrators only', { skip }, async () => {
  const { page } = tab;
  await signInAs(page, t.url, owner.key);
  await page.getByRole('link', { name: 'Account' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Administration' }).count(), 0);
  await page.goto(`${t.url}/admin`);
  await page.getByRole('alert').filter({ hasText: 'Administrators only.' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
});

test('an administrator approves one agent and rejects another with a reason', { skip }, async () => {
  const { page } = tab;
  await signInAs(page, t.url, t.adminKey);
  await page.getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Review queue (2)' }).waitFor();
  await shot(page, 'admin-review');
  const card = (name: string) => page.locator(`li[data-agent="${ids[name]}"]`);
  await card('reviewme').getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('status').filter({ hasText: 'Approved “reviewme”.' }).waitFor();
  await card('reviewme').waitFor({ state: 'detached' });
  const a = await agent(ids.reviewme);
  assert.equal(a.reviewStatus, 'approved');
  assert.equal(a.usageStatus, 'online');

  const r = card('rejectme');
  assert.equal(await r.getByRole('button', { name: 'Reject' }).isDisabled(), true, 'no reject without a reason');
  await r.getByLabel('Reason').fill('the description says nothing');
  await r.getByRole('button', { name: 'Reject' }).click();
  await page.getByText('No agents waiting for review.').waitFor();
  const b = await agent(ids.rejectme);
  assert.equal(b.reviewStatus, 'rejected');
  assert.equal(b.rejectReason, 'the description says nothing');
  // The approved agent is in the market now.
  assert.equal((await t.api('GET', `/api/v1/agents/${encodeURIComponent(ids.reviewme)}`)).status, 200);
  assert.deepEqual(tab.pageErrors, []);
});

test('the users list and the empty redemption queue', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('button', { name: 'Users' }).click();
  const users = page.getByRole('table', { name: 'Users' });
  await users.getByText('agent-owner').waitFor();
  await shot(page, 'admin-users');
  await page.getByLabel('Search').fill('nobody-has-this-name');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No users match.').waitFor();
  await page.getByRole('button', { name: 'Redemptions' }).click();
  await page.getByText('No redemptions pending.').waitFor();
  assert.deepEqual(tab.pageErrors, []);
});

test('users: create one (its key shown once, and working), grant tokens, set and clear a plan, delete it; deleting oneself is refused', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('button', { name: 'Users' }).click();
  const total = (await t.admin.admin.usersSummary()).total;
  await page.locator(`[data-users-total="${total}"]`).waitFor();
  await page.getByLabel('New user’s name').fill('made-in-console');
  await page.getByRole('button', { name: 'Create user' }).click();
  const key = (await page.locator('[data-new-user-key]').textContent())!.trim();
  const made = t.client(key);
  assert.equal((await made.me()).name, 'made-in-console', 'the key shown signs in as the new user');
  await page.locator(`[data-users-total="${total + 1}"]`).waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
  assert.ok(!(await page.content()).includes(key), 'the key is not on the page any more');

  await page.getByLabel('Search').fill('made-in-console');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('button', { name: 'Manage made-in-console' }).click();
  const manage = page.getByRole('group', { name: 'Manage made-in-console' });
  const balance = (await made.billing.balance()).balance;
  await manage.getByLabel('Grant quantity').fill('3');
  await manage.getByRole('button', { name: 'Grant tokens' }).click();
  await page.getByRole('status').filter({ hasText: 'Granted 3,000 tokens to made-in-console' }).waitFor();
  assert.equal((await made.billing.balance()).balance, balance + 3000);

  const plan = (await t.client().billing.plans()).items.find((p) => !p.free)!;
  await manage.getByLabel('Plan').selectOption(plan.id);
  await manage.getByLabel('Ends on').fill('2031-06-30');
  await manage.getByRole('button', { name: 'Set plan' }).click();
  await page.getByRole('status').filter({ hasText: `made-in-console is on ${plan.id} until 2031-06-30` }).waitFor();
  await shot(page, 'admin-user-manage');
  const row = async () => (await t.admin.admin.users({ keyword: 'made-in-console' })).items[0];
  // The browser and this process share the machine's time zone: the end of that day, local time.
  assert.deepEqual([(await row()).planId, (await row()).planExpireAt], [plan.id, new Date('2031-06-30T23:59:59').getTime()]);
  await manage.getByRole('button', { name: 'Clear plan' }).click();
  await page.getByRole('status').filter({ hasText: 'made-in-console has no plan now.' }).waitFor();
  assert.deepEqual([(await row()).planId, (await row()).planExpireAt], [null, null]);

  // Dismissed, the confirmation deletes nothing; accepted, the user goes.
  const asked = answerNextDialog(page, false);
  await manage.getByRole('button', { name: 'Delete user' }).click();
  assert.equal(asked(), 'Delete the user “made-in-console”? Its keys, agents and sessions go with it.');
  assert.equal((await t.api('GET', '/api/v1/me', { token: key })).status, 200, 'a dismissed delete leaves the account');
  page.once('dialog', (d) => void d.accept());
  await manage.getByRole('button', { name: 'Delete user' }).click();
  await page.getByText('No users match.').waitFor();
  assert.equal((await t.admin.admin.users({ keyword: 'made-in-console' })).total, 0);
  assert.equal((await t.api('GET', '/api/v1/me', { token: key })).status, 401, 'its key is gone with it');

  // The hub refuses an administrator deleting their own account: its message is shown, the account stays.
  const self = await t.admin.me();
  await page.getByLabel('Search').fill('');
  await page.getByRole('search').getByLabel('Role').selectOption('admin');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('button', { name: `Manage ${self.name}` }).click();
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('group', { name: `Manage ${self.name}` }).getByRole('button', { name: 'Delete user' }).click();
  await page.getByRole('alert').filter({ hasText: 'an administrator cannot delete their own account (409, code 4090)' }).waitFor();
  assert.equal((await t.admin.me()).id, self.id);
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 409')), [], 'nothing failed but the refused delete');
  tab.pageErrors.length = 0;
});

test('redemptions: the summary, one delivered with cards and one rejected with a reason (refunded), the cards revealed', { skip }, async () => {
  const { page } = tab;
  const buyer = await t.user('redeemer');
  await t.admin.admin.grantTokens(buyer.id, 5);
  const mine = t.client(buyer.key);
  const one = await mine.billing.redeem('coffee-voucher');
  const two = await mine.billing.redeem('coffee-voucher');
  const spent = (await mine.billing.balance()).balance;
  await page.reload();
  await page.getByRole('button', { name: 'Redemptions' }).click();
  await page.locator('[data-redeems-pending="2"]').waitFor();
  const row = (id: string) => page.locator(`tr[data-redeem="${id}"]`);
  await row(one.id).getByLabel('Cards').fill('A-1:B-1\nA-2:B-2');
  await row(one.id).getByRole('button', { name: 'Deliver' }).click();
  await row(one.id).waitFor({ state: 'detached' });
  await row(two.id).getByLabel('Reject reason').fill('out of stock today');
  await row(two.id).getByRole('button', { name: 'Reject' }).click();
  await page.getByText('No redemptions pending.').waitFor();
  await page.locator('[data-redeems-pending="0"]').waitFor();
  const [a, b] = await Promise.all([t.admin.admin.redemption(one.id), t.admin.admin.redemption(two.id)]);
  assert.deepEqual([a.status, a.cardCount], ['delivered', 2]);
  assert.deepEqual([b.status, b.rejectReason], ['rejected', 'out of stock today']);
  assert.equal((await mine.billing.balance()).balance, spent + b.tokens, 'the rejected one is refunded');

  // The administrator has no bound phone: the cards show without a code.
  await page.getByLabel('Status').selectOption('delivered');
  await row(one.id).getByRole('button', { name: 'Reveal cards' }).click();
  const cards = row(one.id).getByRole('table', { name: 'Cards of Coffee voucher' });
  await cards.getByRole('cell', { name: 'A-2' }).waitFor();
  await cards.getByRole('cell', { name: 'B-1' }).waitFor();
  assert.deepEqual((await t.admin.admin.redemptionCards(one.id)).cards, [{ no: 'A-1', pwd: 'B-1' }, { no: 'A-2', pwd: 'B-2' }]);
  await shot(page, 'admin-redemptions');
  assert.deepEqual(tab.pageErrors, []);
});
