// Administration in a real Chromium, beyond the first look (console-admin):
// a review card's facts, a decision on a version the owner has changed since
// refused and the newer one shown, the queue and the users in pages, the users summary and each row's
// figures, an administrator created, a plan with no end, the plan picker
// starting at the user's plan, cards one a line, trimmed, and both actions held while one works, the redemptions
// summary and a delivered or rejected redemption's details.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminConsoleForFile, openAdminTab, ownersView, submitForReview } from './helpers/admin-console.js';
import { eventually } from './helpers/host.js';
import { holdNext, noBrowser } from './helpers/browser.js';

const skip = noBrowser();
const c = adminConsoleForFile('review-owner', skip);

const DAY = 86_400_000;
const n = (x: number) => x.toLocaleString('en-US');
const manage = (id: string) => ownersView(c, id);
const openTab = (name: Parameters<typeof openAdminTab>[1]) => openAdminTab(c, name);
const submitted = (name: string, extra: Record<string, unknown> = {}) => submitForReview(c, name, extra);

test("a review card's facts; a decision on a version the owner has changed since is refused, the newer one shown and decided", { skip }, async () => {
  const { page } = c.tab;
  const quiet = await submitted('quiet-agent');
  const changing = await submitted('changing-agent', { displayName: 'Changing Agent', desc: 'First words', cat: 'coding', pay: 'paid' });
  await openTab('Review queue');
  const card = (id: string) => page.locator(`li[data-agent="${id}"]`);
  await card(quiet).getByText('No description.').waitFor();
  await card(quiet).getByText(/^by review-owner · other · free · submitted /).waitFor();
  await card(changing).getByText(/^by review-owner · coding · paid · submitted /).waitFor();
  await card(changing).getByRole('heading', { name: 'Changing Agent v1' }).waitFor(); // by its display name
  assert.equal(await card(quiet).getByLabel('Reason').getAttribute('maxlength'), '1000');

  // The owner changes what is under review: the card on screen is the old version.
  const e = await c.t.api('PATCH', `/api/v1/agents/${encodeURIComponent(changing)}`, { token: c.owner.key, body: { desc: 'Second words' } });
  assert.equal(e.status, 200, e.text);
  const decided = (action: string) => page.waitForResponse((r) => r.url().endsWith(`/${action}`) && r.request().method() === 'POST');
  const [approved] = await Promise.all([decided('approve'), card(changing).getByRole('button', { name: 'Approve' }).click()]);
  assert.equal(approved.status(), 409);
  // Refused, the queue is read again: the card stays (still pending) and shows the newer version, with the refusal.
  await card(changing).getByText('Second words').waitFor();
  await card(changing).getByText('v2', { exact: true }).waitFor();
  await card(changing).getByRole('alert').getByText('the agent changed since version 1: it is at version 2; review it again (409, code 4090)').waitFor();
  assert.equal(await page.getByText('is no longer in the queue').count(), 0, 'the card stays: nothing to say above it');
  assert.deepEqual([(await manage(changing)).reviewStatus, (await manage(changing)).version], ['pending', 2], 'not approved unseen');
  await card(changing).getByLabel('Reason').fill('  say more  ');
  // The rejection held back a moment: both decisions held meanwhile, the reason sent without its spaces.
  const release = await holdNext(page, (u) => u.pathname.endsWith('/reject'));
  const sent = page.waitForRequest((r) => r.url().endsWith('/reject'));
  await card(changing).getByRole('button', { name: 'Reject' }).click();
  assert.equal((await sent).postDataJSON().reason, 'say more');
  assert.deepEqual(await Promise.all(['Approve', 'Reject'].map((name) => card(changing).getByRole('button', { name }).isDisabled())), [true, true]);
  await release();
  await page.getByRole('status').filter({ hasText: 'Rejected “Changing Agent”.' }).waitFor();
  await card(changing).waitFor({ state: 'detached' });
  assert.deepEqual([(await manage(changing)).reviewStatus, (await manage(changing)).rejectReason], ['rejected', 'say more']);
});

test('the review queue in pages of ten; deciding the last page\'s card goes back a page', { skip }, async () => {
  const { page } = c.tab;
  const have = (await c.t.admin.admin.pendingAgents({ pageSize: 1 })).total;
  for (let i = have; i < 11; i++) await submitted(`waiting-${i}`);
  await openTab('Review queue');
  await page.getByRole('heading', { name: 'Review queue (11)' }).waitFor();
  const pages = page.getByRole('navigation', { name: 'Review pages' });
  await pages.getByText('Page 1').waitFor();
  assert.equal(await page.locator('li[data-agent]').count(), 10);
  assert.ok(await pages.getByRole('button', { name: 'Previous' }).isDisabled());
  await pages.getByRole('button', { name: 'Next' }).click();
  await pages.getByText('Page 2').waitFor();
  await page.locator('li[data-agent]').nth(1).waitFor({ state: 'detached' });
  assert.equal(await page.locator('li[data-agent]').count(), 1);
  assert.ok(await pages.getByRole('button', { name: 'Next' }).isDisabled());
  // Deciding page two's one card leaves ten, all on page one: the queue goes back there, not "No agents waiting".
  await page.locator('li[data-agent]').getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('heading', { name: 'Review queue (10)' }).waitFor();
  await page.locator('li[data-agent]').nth(9).waitFor();
  assert.equal(await page.getByText('No agents waiting for review.').count(), 0, 'ten are waiting');
  assert.equal(await pages.count(), 0, 'ten fit on one page');
});

test("the users summary's figures; each row's contact, balance and plan with its end; Manage opens and closes", { skip }, async () => {
  const { page } = c.tab;
  const member = await c.t.user('plan-member');
  await c.t.hub.ctx.em().getConnection().execute(`update users set email = 'member@example.com' where id = ?`, [member.id]);
  const until = Date.parse('2031-06-30T23:59:59');
  await c.t.admin.admin.setPlan(member.id, { planId: 'team', planExpireAt: until }); // not the first paid plan, which the picker offers by default
  await c.t.admin.admin.grantTokens(member.id, 2);
  await openTab('Users');
  const s = await c.t.admin.admin.usersSummary();
  assert.ok(s.admins !== s.total && s.subscribed !== s.newToday && s.subscribed === 1, JSON.stringify(s));
  const fact = async (name: string) => (await page.locator('dl[aria-label="Users summary"]').locator('dt', { hasText: name }).locator('+ dd').textContent())!;
  await page.locator(`[data-users-total="${s.total}"]`).waitFor();
  assert.deepEqual([await fact('Users'), await fact('Administrators'), await fact('On a plan')], [String(s.total), String(s.admins), String(s.subscribed)]);

  const row = page.locator(`tr[data-user="${member.id}"]`);
  const u = (await c.t.admin.admin.users({ keyword: 'plan-member' })).items[0];
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[2], 'member@example.com');
  assert.equal(cells[3], n(u.balance));
  assert.ok(u.balance > 0);
  assert.match(cells[4], /^team until /);
  await page.getByRole('button', { name: 'Manage plan-member' }).click();
  const group = page.getByRole('group', { name: 'Manage plan-member' });
  await group.waitFor();
  assert.equal(await page.getByRole('button', { name: 'Manage plan-member' }).getAttribute('aria-expanded'), 'true');
  // The plan picker starts at the user's plan and its end.
  assert.equal(await group.getByLabel('Plan').inputValue(), 'team');
  assert.equal(await group.getByLabel('Ends on').inputValue(), '2031-06-30');
  await page.getByRole('button', { name: 'Manage plan-member' }).click();
  await group.waitFor({ state: 'detached' });
});

test('an administrator created as such; a plan set with no end; Clear plan only when there is one', { skip }, async () => {
  const { page } = c.tab;
  await openTab('Users');
  await page.getByLabel('New user’s name').fill('second-admin');
  await page.getByLabel('New user’s role').selectOption('admin');
  await page.getByRole('button', { name: 'Create user' }).click();
  const key = (await page.locator('[data-new-user-key]').textContent())!.trim();
  assert.equal((await c.t.client(key).me()).role, 'admin');
  await page.getByRole('button', { name: 'Done' }).click();

  const plain = await c.t.user('no-plan-yet');
  await page.getByLabel('Search').fill('no-plan-yet');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('button', { name: 'Manage no-plan-yet' }).click();
  const group = page.getByRole('group', { name: 'Manage no-plan-yet' });
  assert.ok(await group.getByRole('button', { name: 'Clear plan' }).isDisabled(), 'no plan to clear');
  await group.getByLabel('Plan').selectOption('team');
  assert.equal(await group.getByLabel('Ends on').inputValue(), '');
  await group.getByRole('button', { name: 'Set plan' }).click();
  await page.getByRole('status').filter({ hasText: 'no-plan-yet is on team with no end.' }).waitFor();
  const row = (await c.t.admin.admin.users({ keyword: 'no-plan-yet' })).items[0];
  assert.deepEqual([row.id, row.planId, row.planExpireAt], [plain.id, 'team', null]);
  await page.locator(`tr[data-user="${plain.id}"]`).getByRole('cell', { name: 'team', exact: true }).waitFor();
});

test('users in pages of twenty; a search goes back to the first page', { skip }, async () => {
  const { page } = c.tab;
  const have = (await c.t.admin.admin.usersSummary()).total;
  for (let i = have; i < 25; i++) await c.t.admin.admin.createUser({ name: `crowd-${i}` });
  await openTab('Users');
  const pages = page.getByRole('navigation', { name: 'User pages' });
  await pages.getByText('Page 1').waitFor();
  assert.equal(await page.locator('tr[data-user]').count(), 20);
  await pages.getByRole('button', { name: 'Next' }).click();
  await pages.getByText('Page 2').waitFor();
  assert.ok(await pages.getByRole('button', { name: 'Next' }).isDisabled());
  // review-owner, the first user made, is on this page already: the search's own answer is the one row.
  await page.getByLabel('Search').fill('review-owner');
  await page.getByRole('button', { name: 'Search' }).click();
  await pages.waitFor({ state: 'detached' });
  await eventually(async () => (await page.locator('tr[data-user]').count()) === 1, 5000, 50);
  await page.getByRole('button', { name: 'Manage review-owner' }).waitFor();
});

test('redemptions: cards one a line (a number, or a number and its password), trimmed; both actions held while one works; the reason trimmed; the summary counts the tokens spent; a delivered one its cards, a rejected one its reason', { skip }, async () => {
  const { page } = c.tab;
  const buyer = await c.t.user('card-buyer');
  const mine = c.t.client(buyer.key);
  const one = await mine.billing.redeem('coffee-voucher');
  const two = await mine.billing.redeem('coffee-voucher');
  await openTab('Redemptions');
  const s = await c.t.admin.admin.redeemsSummary();
  const fact = async (name: string) => (await page.locator('dl[aria-label="Redemptions summary"]').locator('dt', { hasText: name }).locator('+ dd').textContent())!;
  await page.locator('[data-redeems-pending="2"]').waitFor();
  assert.equal(await fact('Tokens spent'), n(s.tokensSpent));
  assert.notEqual(s.tokensSpent, s.total);

  const row = (id: string) => page.locator(`tr[data-redeem="${id}"]`);
  assert.equal(await row(one.id).locator('td').nth(1).innerText(), `card-buyer\n${buyer.id}`, 'whose it is: the name, the id under it');
  // One card a line: the spaces around a number or password and blank lines left out. The delivery held
  // back a moment: both actions held meanwhile.
  await row(one.id).getByLabel('Cards').fill('  N-1  \n\n  N-2 :  P-2  ');
  const release = await holdNext(page, (u) => u.pathname.endsWith('/deliver'));
  await row(one.id).getByRole('button', { name: 'Deliver' }).click();
  await row(one.id).getByLabel('Reject reason').fill('x');
  assert.deepEqual(await Promise.all(['Deliver', 'Reject'].map((name) => row(one.id).getByRole('button', { name }).isDisabled())), [true, true]);
  await release();
  await row(one.id).waitFor({ state: 'detached' });
  assert.deepEqual((await c.t.admin.admin.redemptionCards(one.id)).cards, [{ no: 'N-1', pwd: null }, { no: 'N-2', pwd: 'P-2' }]);
  await row(two.id).getByLabel('Reject reason').fill('  none left at the café  ');
  const sent = page.waitForRequest((r) => r.url().endsWith('/reject'));
  await row(two.id).getByRole('button', { name: 'Reject' }).click();
  assert.equal((await sent).postDataJSON().reason, 'none left at the café');
  await row(two.id).waitFor({ state: 'detached' });

  await page.getByLabel('Status').selectOption('');
  await row(one.id).getByText(/^2 cards, delivered /).waitFor();
  await row(two.id).getByText('none left at the café').waitFor();
  await row(two.id).getByText('rejected', { exact: true }).waitFor();
});
