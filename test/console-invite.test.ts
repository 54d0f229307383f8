// An invitation opened in the console: the owner's page shows console links
// (/invites/<token>), not API paths; a second user, signed out, sees the
// agent and is asked to sign in, comes back to the invitation after signing
// in, joins, and the private agent is then shared with them; a spent or
// unknown token reads as a message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { closeConsoleTest, noBrowser, openConsole, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let agentId: string;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('invite-owner');
  guest = await t.user('guest');
  const hostId = await seedHost(t, owner.id);
  const c = await t.api('POST', '/api/v1/agents', {
    token: owner.key,
    body: { name: 'private-helper', scope: 'private', hostId, engine: 'claude-code', desc: 'Answers questions about our repo', cat: 'coding' },
  });
  assert.equal(c.status, 201, c.text);
  agentId = c.body.data.id;
  tab = await openConsole(t.url);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

const sharedWithGuest = async () => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: guest.key })).body.data?.sharedWithMe;

test("the owner's invitation opens in the console: sign in, come back, join; the agent is then shared", { skip }, async () => {
  const { page } = tab;
  const inv = await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/invites`, { token: owner.key });
  assert.equal(inv.status, 200, inv.text);
  const token: string = inv.body.data.token;
  assert.notEqual(await sharedWithGuest(), true, 'not shared before joining');

  // Signed out: the agent's summary, and a sign-in link that returns here.
  await page.goto(`${t.url}/invites/${encodeURIComponent(token)}`);
  await page.getByRole('heading', { name: 'invite-owner invites you to private-helper' }).waitFor();
  await page.getByText('Answers questions about our repo').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Join' }).count(), 0, 'no Join before signing in');
  await page.getByRole('link', { name: 'Sign in' }).last().click();
  await page.getByLabel('API key').fill(guest.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Join' }).waitFor();
  assert.equal(new URL(page.url()).pathname, `/invites/${encodeURIComponent(token)}`);
  await page.getByRole('button', { name: 'Decline' }).waitFor();
  await shot(page, 'invite');

  await page.getByRole('button', { name: 'Join' }).click();
  await page.getByText('You have joined').waitFor();
  assert.equal(await sharedWithGuest(), true);
  await page.getByRole('button', { name: 'Start a session' }).waitFor();
  await page.getByRole('link', { name: "Open the agent's page" }).click();
  await page.getByRole('heading', { name: 'private-helper', level: 1 }).waitFor();

  // The invitation is single use: opened again, it reads as a message.
  await page.goto(`${t.url}/invites/${encodeURIComponent(token)}`);
  await page.getByRole('alert').getByText(/invitation not found/).waitFor();
  await page.getByRole('main').getByRole('link', { name: 'Go to the market' }).click();
  await page.getByRole('heading', { name: 'Market', level: 1 }).waitFor();
});

test("the owner's page shows the console's invitation address, which opens the invitation page", { skip }, async () => {
  const ctx = await tab.browser.newContext({ baseURL: t.url });
  const page = await ctx.newPage();
  try {
    await page.goto(`${t.url}/signin`);
    await page.getByLabel('API key').fill(owner.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${t.url}/agents/${encodeURIComponent(agentId)}`);
    const shown = (await page.getByTestId('share-link').textContent())!;
    assert.match(shown, new RegExp(`^${t.url}/invites/\\S+$`));
    assert.match((await page.getByTestId('invite-link').textContent())!, new RegExp(`^${t.url}/invites/\\S+$`));
    await page.goto(shown);
    await page.getByText('You own this agent.').waitFor();
  } finally {
    await ctx.close();
  }
});

test("a sign-in page's ?from= that is not a path of this site is ignored: signed in, the console goes to /sessions", { skip }, async () => {
  for (const from of ['//evil.example/phish', '/\\evil.example/phish', 'https://evil.example/']) {
    const page = await tab.context.newPage(); // a tab of its own: signed out (the key lives in a tab's session storage)
    try {
      await page.goto(`${t.url}/signin?from=${encodeURIComponent(from)}`);
      await page.getByLabel('API key').fill(guest.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => u.pathname === '/sessions', { timeout: 10_000 });
      assert.equal(new URL(page.url()).origin, new URL(t.url).origin, from);
      assert.equal(await page.getByRole('alert').count(), 0, `no error shown for ${from}`);
    } finally {
      await page.close();
    }
  }
});
