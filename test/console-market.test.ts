// The console in a real Chromium: the market without signing in, an agent's
// page, signing in with a key (a wrong key reads as a message), starting a
// session from the agent's page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { closeConsoleTest, noBrowser, openConsole, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let viewer: { id: string; key: string };
const agentIds: Record<string, string> = {};

async function publish(name: string, body: object) {
  const host = await seedHost(t, owner.id);
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', ...body } });
  assert.equal(c.status, 201, c.text);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(c.body.data.id)}/approve`, { token: t.adminKey })).status, 200);
  agentIds[name] = c.body.data.id;
}

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('market-owner');
  viewer = await t.user('viewer');
  await publish('pyhelp', { desc: 'Python helper', tags: ['python', 'code'], cat: 'coding' });
  await publish('writer', { desc: 'Blog writer', tags: ['blog'], cat: 'writing' });
  tab = await openConsole(t.url);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

test('the market lists approved agents without signing in, and search narrows it', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('heading', { name: 'Market' }).waitFor();
  const results = page.getByRole('list', { name: 'Agents' });
  await results.getByRole('link', { name: 'pyhelp' }).waitFor();
  await results.getByRole('link', { name: 'writer' }).waitFor();
  await shot(page, 'market');
  await page.getByLabel('Search').fill('blog');
  await page.getByRole('button', { name: 'Search' }).click();
  await results.getByRole('link', { name: 'pyhelp' }).waitFor({ state: 'detached' });
  assert.equal(await results.getByRole('link', { name: 'writer' }).count(), 1);
  // A tag facet narrows the list; pressing it again clears it.
  await page.getByLabel('Search').fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('button', { name: '#python (1)' }).click();
  await results.getByRole('link', { name: 'writer' }).waitFor({ state: 'detached' });
  assert.equal(await results.getByRole('link', { name: 'pyhelp' }).count(), 1);
  await page.getByRole('button', { name: '#python (1)' }).click();
  await results.getByRole('link', { name: 'writer' }).waitFor();
  await page.getByLabel('Search').fill('nothing-matches-this');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No agents match.').waitFor();
});

test("an agent's page shows its facts and asks to sign in before a session", { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/market/${encodeURIComponent(agentIds.pyhelp)}`);
  await page.getByRole('heading', { name: 'pyhelp' }).waitFor();
  await page.getByText('market-owner').waitFor();
  await page.getByText('to start a session').waitFor();
  assert.equal(await page.getByRole('button', { name: /Favorite/ }).count(), 0, 'no favorite button before signing in');
  await shot(page, 'agent');
});

test('a wrong key reads as a message; a right one signs in and a session starts from the market', { skip }, async () => {
  const { page } = tab;
  // Signing in from an agent's page comes back to it.
  const writerPath = `/market/${encodeURIComponent(agentIds.writer)}`;
  await page.goto(t.url + writerPath);
  await page.getByText('to start a session or keep it as a favorite; you come back here afterwards.').waitFor();
  await page.getByRole('article').getByRole('link', { name: 'Sign in' }).click();
  await page.waitForURL(`${t.url}/signin?from=${encodeURIComponent(writerPath)}`);
  await page.getByLabel('API key').fill('ahk_not-a-real-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /\(401, code 4\d{3}\)/);
  await shot(page, 'signin');
  await page.getByLabel('API key').fill(viewer.key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(t.url + writerPath);
  await page.getByRole('button', { name: '☆ Favorite' }).click();
  await page.getByRole('button', { name: '★ Favorited' }).waitFor();
  const fav = await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentIds.writer)}`, { token: viewer.key });
  assert.equal(fav.body.data.favorited, true);
  await page.getByRole('button', { name: 'Start a session' }).click();
  await page.waitForURL(/\/sessions\/[^/]+$/);
  await page.getByText('No messages yet.').waitFor();
  const list = await t.api('GET', '/api/v1/sessions', { token: viewer.key });
  assert.equal(list.body.data.items.length, 1);
  assert.deepEqual(tab.pageErrors.filter((e) => !/401|Failed to load resource/.test(e)), []);
});
