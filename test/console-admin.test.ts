// The Administration page in a real Chromium: the nav link only for
// administrators; the review queue approves one agent and rejects another
// with a reason; the users list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { noBrowser, openConsole, shot, signInAs, type ConsoleTab } from './helpers/browser.js';

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
  await tab.close();
  await t.close();
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
