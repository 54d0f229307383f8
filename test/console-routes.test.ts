// The console's shell (console/main.tsx): which page each address shows. Signed out, every private page
// (sessions, agents, hosts, models, account, administration) shows the sign-in form in its place; an
// address with a trailing slash shows the same page as without; the header's links lead to their pages;
// its Sign in on the provider's return address is the plain /signin; Sign out forgets the key and goes
// to the market; a signed-in user who is not an administrator is told so on /admin, and an administrator
// is not told so while the hub is still saying who they are.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let user: { id: string; key: string };

before(async () => {
  if (skip) return;
  t = await startTestHub();
  user = await t.user('wanderer');
  tab = await openConsole(t.url);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

/** Each page's address and its heading. */
const PAGES: Array<[string, string]> = [
  ['/sessions', 'Sessions'],
  ['/agents', 'My agents'],
  ['/hosts', 'Hosts'],
  ['/models', 'Model configurations'],
  ['/account', 'Account'],
];

const heading = () => tab.page.getByRole('heading', { level: 1 });

async function shows(path: string, title: string) {
  await tab.page.goto(t.url + path);
  await tab.page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
  assert.equal(await heading().innerText(), title, path);
}

test('signed out, each private page, with or without a trailing slash, is the sign-in form; the market is not', { skip }, async () => {
  for (const [path] of [...PAGES, ['/admin']]) {
    for (const p of [path, `${path}/`]) {
      await shows(p, 'Sign in');
      await tab.page.getByLabel('API key').waitFor();
    }
  }
  for (const p of ['/', '/market', '/market/']) await shows(p, 'Market');
});

test("the header's Sign in on the provider's return address is the plain /signin", { skip }, async () => {
  await tab.page.goto(`${t.url}/auth/callback`);
  await tab.page.getByRole('link', { name: 'Try again' }).waitFor();
  assert.equal(await tab.page.getByRole('banner').getByRole('link', { name: 'Sign in' }).getAttribute('href'), '/signin');
});

test('signed in: the header leads to each page, a trailing slash shows the same page, /admin says administrators only', { skip }, async () => {
  const { page } = tab;
  await signInAs(page, t.url, user.key);
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const [path, title] of PAGES) {
    const link = nav.getByRole('link', { name: title === 'Model configurations' ? 'Models' : title, exact: true });
    await link.click();
    await page.waitForURL((u) => u.pathname === path);
    await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
  }
  assert.equal(await nav.getByRole('link', { name: 'Administration' }).count(), 0);
  for (const [path, title] of PAGES) await shows(`${path}/`, title);
  await shows('/admin/', 'Administration');
  await page.getByRole('alert').filter({ hasText: 'Administrators only.' }).waitFor();
  await shows('/market/', 'Market');
});

test('Sign out forgets the key and goes to the market; the private pages ask to sign in again', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/hosts`);
  await page.getByRole('heading', { name: 'Hosts' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('heading', { name: 'Market' }).waitFor();
  await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey')), null);
  await shows('/hosts', 'Sign in');
});

test("an administrator's /admin waits for the account's role: Loading…, never \"Administrators only\"", { skip }, async () => {
  const { page } = tab;
  await signInAs(page, t.url, t.adminKey);
  const release = await holdNext(page, (u) => u.pathname === '/api/v1/me');
  await page.goto(`${t.url}/admin`);
  await page.getByText('Loading…').first().waitFor();
  assert.equal(await page.getByText('Administrators only.').count(), 0);
  await release();
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).waitFor();
  assert.equal(await page.getByText('Administrators only.').count(), 0);
});
