// The invitation page beyond the join (console-invite.test.ts): its facts and how it came (a share
// link, or an invitation that works once); Decline changes nothing; Join says "Joining…" while it is
// decided; a member opening the link again is told at once and starts a session from there; a
// refused session or decision reads as a message; the owner is sent to manage the agent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab; // the guest's
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let agentId: string;
let linkToken: string;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('decide-owner');
  guest = await t.user('decide-guest');
  const hostId = await seedHost(t, owner.id);
  const a = await t.client(owner.key).agents.create({ name: 'link-helper', scope: 'private', hostId, engine: 'claude-code', cat: 'data' });
  agentId = a.id;
  linkToken = (await t.client(owner.key).agents.shareLink(agentId)).token;
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, guest.key);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

const open = async (page: Page, token: string) => {
  await page.goto(`${t.url}/invites/${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'decide-owner invites you to link-helper' }).waitFor();
};
const fact = async (page: Page, name: string) => (await page.locator('dl.facts dt', { hasText: name }).locator('+ dd').innerText()).trim();
/** Whether the agent is shared with the guest (a private agent not shared reads as not found). */
const shared = async () => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: guest.key })).body.data?.sharedWithMe === true;

test("a share link's page: the agent's facts, no description said, through a share link; Decline changes nothing", { skip }, async () => {
  const { page } = tab;
  await open(page, linkToken);
  await page.getByText('No description.').waitFor();
  assert.deepEqual(
    [await fact(page, 'Owner'), await fact(page, 'Category'), await fact(page, 'Engine'), await fact(page, 'Pricing'), await fact(page, 'Through')],
    ['decide-owner', 'data', 'claude-code', 'free', 'a share link'],
  );
  await page.getByRole('button', { name: 'Decline' }).click();
  await page.getByRole('status').filter({ hasText: 'Declined.' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Join' }).count(), 0);
  assert.equal(await shared(), false);
  await page.getByRole('main').getByRole('link', { name: 'Go to the market' }).click();
  await page.getByRole('heading', { name: 'Market' }).waitFor();
});

test("a public agent's link says what it costs", { skip }, async () => {
  const { page } = tab;
  const hostId = await seedHost(t, owner.id, ['claude-code'], 'public-box');
  const paid = await t.client(owner.key).agents.create({ name: 'paid-helper', displayName: 'Pull Request Reviewer', desc: 'Reviews pull requests', scope: 'public', pay: 'paid', step: 'submit', hostId, engine: 'claude-code' });
  await t.admin.admin.approveAgent(paid.id);
  await page.goto(`${t.url}/invites/${encodeURIComponent((await t.client(owner.key).agents.shareLink(paid.id)).token)}`);
  await page.getByRole('heading', { name: 'decide-owner invites you to Pull Request Reviewer' }).waitFor();
  await page.getByText('Reviews pull requests').waitFor();
  assert.equal(await fact(page, 'Pricing'), 'paid');
});

test('an invitation works once and says so; Join reads "Joining…" while decided; the link then shows the member joined, and a session starts from it', { skip }, async () => {
  const { page } = tab;
  const invite = (await t.client(owner.key).agents.invites(agentId)).token;
  await open(page, invite);
  assert.equal(await fact(page, 'Through'), 'an invitation (works once)');
  // The decision held back a moment, so the page's state while it is pending can be seen.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/decide', async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('button', { name: 'Join' }).click();
  const joining = page.getByRole('button', { name: 'Joining…' });
  await joining.waitFor();
  assert.ok(await joining.isDisabled());
  assert.ok(await page.getByRole('button', { name: 'Decline' }).isDisabled());
  release();
  await page.getByRole('status').filter({ hasText: 'You have joined' }).waitFor();
  await page.unroute('**/decide');
  assert.equal(await shared(), true);

  // Opened again (the link this time): joined, said at once, no Join.
  await open(page, linkToken);
  await page.getByRole('status').filter({ hasText: 'You have joined' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Join' }).count(), 0);
  // The session's creation held back: the button says so and takes no second click.
  const release2 = await holdNext(page, (u, m) => u.pathname === '/api/v1/sessions' && m === 'POST');
  await page.getByRole('button', { name: 'Start a session' }).click();
  const starting = page.getByRole('button', { name: 'Starting…' });
  await starting.waitFor();
  assert.ok(await starting.isDisabled());
  await release2();
  await page.waitForURL((u) => u.pathname.startsWith('/sessions/'));
  const id = decodeURIComponent(new URL(page.url()).pathname.slice('/sessions/'.length));
  const s = await t.client(guest.key).sessions.get(id);
  assert.equal(s.agentId, agentId);
});

test('a session refused from the invitation page reads as a message, and the page stays', { skip }, async () => {
  const { page } = tab;
  await t.client(owner.key).agents.update(agentId, { enable: false });
  await open(page, linkToken);
  const before = (await t.client(guest.key).sessions.list({})).total;
  await page.getByRole('button', { name: 'Start a session' }).click();
  await page.getByRole('alert').filter({ hasText: /\(4\d\d, code \d+\)/ }).waitFor();
  assert.match(new URL(page.url()).pathname, /^\/invites\//);
  assert.equal((await t.client(guest.key).sessions.list({})).total, before);
  await t.client(owner.key).agents.update(agentId, { enable: true });
});

test('a refused decision reads as a message: a removed member cannot come back through the link', { skip }, async () => {
  const { page } = tab;
  await t.client(owner.key).agents.removeMember(agentId, guest.id);
  await open(page, linkToken);
  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByRole('alert').filter({ hasText: 'the owner removed you from this agent' }).waitFor();
  assert.equal(await shared(), false);
});

test('the owner opening the link is sent to manage the agent', { skip }, async () => {
  const ctx = await tab.browser.newContext({ baseURL: t.url });
  const page = await ctx.newPage();
  try {
    await signInAs(page, t.url, owner.key);
    await open(page, linkToken);
    await page.getByText('You own this agent.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Join' }).count(), 0);
    await page.getByRole('link', { name: 'Manage it' }).click();
    await page.waitForURL((u) => u.pathname === `/agents/${encodeURIComponent(agentId)}`);
    await page.getByRole('heading', { name: 'link-helper' }).waitFor();
  } finally {
    await ctx.close();
  }
});
