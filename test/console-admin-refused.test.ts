// Administration's review queue and redemptions when another administrator (or the owner) moved
// first, in a real Chromium on a hub of its own: a decision or a fulfilment the hub refused reads the
// list again (docs/decisions.md, "The same rule on the other pages"). A card or row that went with it
// is said at the list's level, in the hub's words (one that stays, the agent under review changed by
// its owner, shows the newer version with the refusal: test/console-admin-details.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminConsoleForFile, openAdminTab, ownersView, submitForReview } from './helpers/admin-console.js';
import { noBrowser } from './helpers/browser.js';

const skip = noBrowser();
const c = adminConsoleForFile('refused-owner', skip);

const pending = async () => (await c.t.admin.admin.pendingAgents({ pageSize: 1 })).total;
const posted = (action: string) => c.tab.page.waitForResponse((r) => r.url().endsWith(`/${action}`) && r.request().method() === 'POST');
const manage = (id: string) => ownersView(c, id);
const openTab = (name: Parameters<typeof openAdminTab>[1]) => openAdminTab(c, name);
const submitted = (name: string) => submitForReview(c, name, { desc: `${name} v1` });

test('review: an agent approved by another administrator, or deleted by its owner, while on screen: the refusal is said and the card goes', { skip }, async () => {
  const { page } = c.tab;
  const approvedElsewhere = await submitted('approved-elsewhere');
  const deletedByOwner = await submitted('deleted-by-owner');
  const staying = await submitted('still-waiting');
  await openTab('Review queue');
  const card = (id: string) => page.locator(`li[data-agent="${id}"]`);
  await card(deletedByOwner).waitFor();
  await page.getByRole('heading', { name: 'Review queue (3)' }).waitFor();

  await c.t.admin.admin.approveAgent(approvedElsewhere, 1);
  const [a] = await Promise.all([posted('approve'), card(approvedElsewhere).getByRole('button', { name: 'Approve' }).click()]);
  assert.equal(a.status(), 409);
  await page.getByRole('status').filter({ hasText: '“approved-elsewhere” is no longer in the queue: agent is not pending review.' }).waitFor();
  await card(approvedElsewhere).waitFor({ state: 'detached' });
  await page.getByRole('heading', { name: 'Review queue (2)' }).waitFor();
  assert.equal((await manage(approvedElsewhere)).reviewStatus, 'approved');

  const del = await c.t.api('DELETE', `/api/v1/agents/${encodeURIComponent(deletedByOwner)}`, { token: c.owner.key });
  assert.equal(del.status, 204, del.text);
  await card(deletedByOwner).getByLabel('Reason').fill('too late');
  const [r] = await Promise.all([posted('reject'), card(deletedByOwner).getByRole('button', { name: 'Reject' }).click()]);
  assert.equal(r.status(), 404);
  await page.getByRole('status').filter({ hasText: '“deleted-by-owner” is no longer in the queue: agent not found.' }).waitFor();
  await card(deletedByOwner).waitFor({ state: 'detached' });
  await page.getByRole('heading', { name: 'Review queue (1)' }).waitFor();

  // A decision that goes through says so, and a refusal said before is not said again.
  await card(staying).getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('status').filter({ hasText: 'Approved “still-waiting”.' }).waitFor();
  assert.equal(await page.getByText('is no longer in the queue').count(), 0);
  await page.getByText('No agents waiting for review.').waitFor();
  assert.equal(await pending(), 0);
});

test('redemptions: one delivered and one rejected by another administrator while on screen: the refusal is said, the row leaves the pending list, the summary is read again', { skip }, async () => {
  const { page } = c.tab;
  const buyer = await c.t.user('refused-buyer');
  const mine = c.t.client(buyer.key);
  const one = await mine.billing.redeem('coffee-voucher');
  const two = await mine.billing.redeem('coffee-voucher');
  const three = await mine.billing.redeem('coffee-voucher');
  const four = await mine.billing.redeem('coffee-voucher');
  await openTab('Redemptions');
  const row = (id: string) => page.locator(`tr[data-redeem="${id}"]`);
  await page.locator('[data-redeems-pending="4"]').waitFor();
  await row(three.id).waitFor();

  await c.t.admin.admin.deliverRedeem(one.id, [{ no: 'ELSEWHERE-1' }]);
  await row(one.id).getByLabel('Cards').fill('HERE-1');
  const [d] = await Promise.all([posted('deliver'), row(one.id).getByRole('button', { name: 'Deliver' }).click()]);
  assert.equal(d.status(), 409);
  await page.getByRole('status').filter({ hasText: `${one.productName} × 1 is no longer pending: redemption is already delivered.` }).waitFor();
  await row(one.id).waitFor({ state: 'detached' });
  await page.locator('[data-redeems-pending="3"]').waitFor();
  assert.deepEqual((await c.t.admin.admin.redemptionCards(one.id)).cards, [{ no: 'ELSEWHERE-1', pwd: null }], 'the first delivery stands');

  await c.t.admin.admin.rejectRedeem(two.id, 'out of stock');
  await row(two.id).getByLabel('Reject reason').fill('changed my mind');
  const [r] = await Promise.all([posted('reject'), row(two.id).getByRole('button', { name: 'Reject' }).click()]);
  assert.equal(r.status(), 409);
  await page.getByRole('status').filter({ hasText: `${two.productName} × 1 is no longer pending: redemption is already rejected.` }).waitFor();
  await row(two.id).waitFor({ state: 'detached' });
  await page.locator('[data-redeems-pending="2"]').waitFor();

  // Under "All" the row stays, as the other administrator left it; one fulfilled here says nothing above the table.
  await page.getByLabel('Status').selectOption('');
  await row(two.id).getByText('out of stock').waitFor();
  await row(three.id).getByLabel('Cards').fill('HERE-3');
  await row(three.id).getByRole('button', { name: 'Deliver' }).click();
  await row(three.id).getByText(/^1 card, delivered /).waitFor();
  assert.equal(await page.getByText('is no longer pending').count(), 0);

  // Under "All" a row delivered elsewhere stays, delivered: the refusal is said above the table all the same.
  await c.t.admin.admin.deliverRedeem(four.id, [{ no: 'ELSEWHERE-4' }]);
  await row(four.id).getByLabel('Cards').fill('HERE-4');
  await row(four.id).getByRole('button', { name: 'Deliver' }).click();
  await page.getByRole('status').filter({ hasText: `${four.productName} × 1 is no longer pending: redemption is already delivered.` }).waitFor();
  await row(four.id).getByText(/^1 card, delivered /).waitFor();
});

test('review: a refused approval of an agent changed under review clears the last decision said; the newer version is then approved', { skip }, async () => {
  const { page } = c.tab;
  const plain = await submitted('plain-one');
  const changing = await submitted('changing-under-review');
  await openTab('Review queue');
  const card = (id: string) => page.locator(`li[data-agent="${id}"]`);
  await card(plain).getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('status').filter({ hasText: 'Approved “plain-one”.' }).waitFor();
  const e = await c.t.api('PATCH', `/api/v1/agents/${encodeURIComponent(changing)}`, { token: c.owner.key, body: { desc: 'changed while read' } });
  assert.equal(e.status, 200, e.text);
  const [a] = await Promise.all([posted('approve'), card(changing).getByRole('button', { name: 'Approve' }).click()]);
  assert.equal(a.status(), 409);
  await card(changing).getByText('changed while read').waitFor();
  assert.equal(await page.getByRole('status').count(), 0, 'neither the last decision nor a notice: the card says it');
  await card(changing).getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('status').filter({ hasText: 'Approved “changing-under-review”.' }).waitFor();
  assert.deepEqual([(await manage(changing)).reviewStatus, (await manage(changing)).version], ['approved', 2]);
});
