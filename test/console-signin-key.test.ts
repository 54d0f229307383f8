// The sign-in page with an API key, beyond the first look (console-market.test.ts): the button waits for
// a key and says "Checking…" while the hub checks it; spaces around a pasted key do not matter; a refused
// key is said and nothing is kept; signing in on a page that asked for it shows that page afterwards;
// the header's Sign in comes back to the page it was pressed on;
// a provider's sign-in that the hub cannot start is said, and the button is offered again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, type ConsoleTab } from './helpers/browser.js';
import type { SessionView } from '../src/client/index.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let user: { id: string; key: string };
let agentId: string;
const contexts: BrowserContext[] = [];

before(async () => {
  if (skip) return;
  t = await startTestHub();
  user = await t.user('key-holder');
  const hostId = await seedHost(t, user.id);
  agentId = (await t.client(user.key).agents.create({ name: 'own-bot', scope: 'private', hostId, engine: 'claude-code' })).id;
  tab = await openConsole(t.url);
});

after(async () => {
  if (skip) return;
  for (const c of contexts) await c.close().catch(() => {});
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

/** A signed-out tab of its own (the key lives in a tab's session storage), its script errors kept with the others. */
async function signedOutTab(path: string): Promise<Page> {
  const ctx = await tab.browser.newContext({ baseURL: t.url });
  contexts.push(ctx);
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => tab.pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') tab.pageErrors.push(m.text());
  });
  await page.goto(t.url + path);
  return page;
}

const signInButton = (page: Page) => page.getByRole('button', { name: /^(Sign in|Checking…)$/ });

test('the button waits for a key, says "Checking…" while the hub checks it; a key pasted with spaces around it signs in', { skip }, async () => {
  const page = await signedOutTab('/signin');
  const key = page.getByLabel('API key');
  await key.waitFor();
  assert.equal(await key.getAttribute('type'), 'password', 'the key is not shown as it is typed');
  assert.ok(await signInButton(page).isDisabled(), 'no key yet');
  await key.fill('   ');
  assert.ok(await signInButton(page).isDisabled(), 'only spaces');
  await key.fill(`  ${user.key}\t`);
  assert.ok(await signInButton(page).isEnabled());
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/v1/me', async (route) => {
    await held;
    await route.continue();
  });
  await signInButton(page).click();
  await page.getByRole('button', { name: 'Checking…' }).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Checking…' }).isDisabled());
  release();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.unroute('**/api/v1/me');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey')), user.key, 'the key kept without the spaces');
  // Signed in with the key as it is: the next pages' calls are answered.
  await page.waitForURL((u) => u.pathname === '/sessions');
  await page.getByText('No sessions yet').waitFor();
  await page.getByRole('link', { name: 'My agents' }).click();
  await page.getByRole('link', { name: 'own-bot' }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
});

test('a refused key is said, nothing is kept, and the button is offered again', { skip }, async () => {
  const page = await signedOutTab('/signin');
  await page.getByLabel('API key').fill('ak_not-a-key-of-this-hub');
  await signInButton(page).click();
  await page.getByRole('alert').filter({ hasText: /\(401, code \d+\)/ }).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Sign in', exact: true }).isEnabled());
  assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'no key kept');

  // The right key next: the refusal goes while the hub checks it.
  await page.getByLabel('API key').fill(user.key);
  const release = await holdNext(page, (u) => u.pathname === '/api/v1/me');
  await signInButton(page).click();
  await page.getByRole('button', { name: 'Checking…' }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'the refusal is not left beside the new check');
  await release();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
});

test('a page that asked for sign-in is the page shown afterwards', { skip }, async () => {
  const s = (await t.client(user.key).sessions.create({ agentId })) as SessionView;
  const cases: Array<[string, string]> = [
    [`/sessions/${encodeURIComponent(s.id)}`, `/sessions/${encodeURIComponent(s.id)}`],
    [`/agents/${encodeURIComponent(agentId)}`, `/agents/${encodeURIComponent(agentId)}`],
    ['/hosts', '/hosts'],
    ['/hosts?view=all', '/hosts?view=all'], // with its query
    [`/signin?from=${encodeURIComponent('/account')}`, '/account'],
    ['/signin', '/sessions'],
  ];
  for (const [path, lands] of cases) {
    const page = await signedOutTab(path);
    await page.getByLabel('API key').fill(user.key);
    await signInButton(page).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.waitForURL((u) => u.pathname + u.search === lands, { timeout: 10_000 });
    await page.close();
  }
});

test("the header's Sign in comes back to the page it was pressed on; from the market's front, to the sessions", { skip }, async () => {
  const here = `/market/${encodeURIComponent(agentId)}`;
  for (const [path, lands] of [[here, here], ['/', '/sessions']]) {
    const page = await signedOutTab(path);
    await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/signin');
    await page.getByLabel('API key').fill(user.key);
    await signInButton(page).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.waitForURL((u) => u.pathname + u.search === lands, { timeout: 10_000 });
    await page.close();
  }
});

test("a provider's sign-in the hub cannot start is said, and the button is offered again", { skip }, async () => {
  const ctx = await tab.browser.newContext({ baseURL: t.url });
  contexts.push(ctx);
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  // The hub here has no provider: its answers stand in for one whose identity service is down.
  await page.route('**/api/v1/auth/providers', (route) => route.fulfill({ json: { code: '0', message: 'ok', data: { items: [{ id: 'oidc', name: 'Example ID' }] } } }));
  await page.route('**/api/v1/auth/login*', (route) => route.fulfill({ status: 502, json: { code: '5021', message: 'the identity provider did not answer', data: null } }));
  await page.goto(`${t.url}/signin`);
  const button = page.getByRole('button', { name: 'Sign in with Example ID' });
  await button.click();
  await page.getByRole('alert').filter({ hasText: 'the identity provider did not answer (502, code 5021)' }).waitFor();
  assert.ok(await button.isEnabled());
  assert.equal(new URL(page.url()).pathname, '/signin');
});
