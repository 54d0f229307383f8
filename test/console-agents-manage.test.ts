// An agent's page and the My agents list in a real browser, beyond the first
// look (console-agents): sharing (a new link or invitation stops the old one;
// members listed with how they joined, one removed), the stats and the list's
// counters after runs on a fake host, the list's pages, a rejected agent's
// reason and resubmit, and what the page says when the agent is gone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { agentWhenReady, connectFakeHost, endRunsAtOnce, eventually, pairHost, type FakeHost } from './helpers/host.js';
import { answerNextDialog, closeConsoleTest, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';
import type { AcceptedRun } from '../src/client/index.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let offlineHost: string;
let host: FakeHost | undefined;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('manage-owner');
  offlineHost = await seedHost(t, owner.id, ['claude-code'], 'old-box');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, owner.key);
});

after(async () => {
  if (skip) return;
  host?.close();
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

const path = (id: string) => `/api/v1/agents/${encodeURIComponent(id)}`;

async function privateAgent(name: string): Promise<string> {
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, scope: 'private', hostId: offlineHost, engine: 'claude-code' } });
  assert.equal(c.status, 201, c.text);
  return c.body.data.id;
}

const tokenIn = (text: string | null) => decodeURIComponent(new URL(text!).pathname.split('/')[2]);

test('sharing: a new link or invitation (asked first) stops the old one; members are listed with how they joined, one removed (asked first) loses the agent, one removed elsewhere is refused and goes', { skip }, async () => {
  const { page } = tab;
  const id = await privateAgent('shared-bot');
  await page.goto(`${t.url}/agents/${encodeURIComponent(id)}`);
  const sharing = page.getByRole('region', { name: 'Sharing' });
  await sharing.getByText('Nobody has joined yet.').waitFor();
  await sharing.getByText('Members (0)').waitFor();

  const oldLink = tokenIn(await sharing.getByTestId('share-link').textContent());
  let asked = answerNextDialog(page, false);
  await sharing.getByRole('button', { name: 'New link' }).click();
  assert.equal(asked(), 'Replace the share link? The current one stops working; members who joined stay.');
  assert.equal((await t.api('GET', `/api/v1/invites/${encodeURIComponent(oldLink)}`)).status, 200, 'dismissed: the link stays');
  answerNextDialog(page, true);
  await sharing.getByRole('button', { name: 'New link' }).click();
  await eventually(async () => tokenIn(await sharing.getByTestId('share-link').textContent()) !== oldLink);
  const link = tokenIn(await sharing.getByTestId('share-link').textContent());
  assert.equal((await t.api('GET', `/api/v1/invites/${encodeURIComponent(oldLink)}`)).status, 404, 'the old link stopped');
  assert.equal((await t.api('GET', `/api/v1/invites/${encodeURIComponent(link)}`)).status, 200, 'the one shown works');

  const oldInvite = tokenIn(await sharing.getByTestId('invite-link').textContent());
  asked = answerNextDialog(page, true);
  await sharing.getByRole('button', { name: 'New invitation' }).click();
  assert.equal(asked(), 'Replace the invitation? The current one stops working.');
  await eventually(async () => tokenIn(await sharing.getByTestId('invite-link').textContent()) !== oldInvite);
  const invite = tokenIn(await sharing.getByTestId('invite-link').textContent());
  assert.equal((await t.api('GET', `/api/v1/invites/${encodeURIComponent(oldInvite)}`)).status, 404);

  const viaLink = await t.user('joined-by-link');
  const viaInvite = await t.user('joined-by-invite');
  for (const [u, token] of [[viaLink, link], [viaInvite, invite]] as const) {
    const r = await t.api('POST', `/api/v1/invites/${encodeURIComponent(token)}/decide`, { token: u.key, body: { accept: true } });
    assert.equal(r.status, 200, r.text);
  }
  await page.reload();
  await sharing.getByText('Members (2)').waitFor();
  const byLink = sharing.getByRole('listitem').filter({ hasText: 'joined-by-link' });
  const byInvite = sharing.getByRole('listitem').filter({ hasText: 'joined-by-invite' });
  await byLink.getByText('via share link').waitFor();
  await byInvite.getByText('via invitation').waitFor();

  const sharedWith = async (key: string) => (await t.api('GET', path(id), { token: key })).body.data?.sharedWithMe === true;
  assert.equal(await sharedWith(viaLink.key), true);
  asked = answerNextDialog(page, false);
  await byLink.getByRole('button', { name: 'Remove' }).click();
  assert.equal(asked(), 'Remove “joined-by-link”? They lose this agent.');
  assert.equal(await sharedWith(viaLink.key), true, 'dismissed: still a member');
  answerNextDialog(page, true);
  await byLink.getByRole('button', { name: 'Remove' }).click();
  await byLink.waitFor({ state: 'detached' });
  await sharing.getByText('Members (1)').waitFor();
  assert.equal(await sharedWith(viaLink.key), false, 'removed: no longer shared with them');
  assert.equal(await sharedWith(viaInvite.key), true, 'the other member stays');

  // Removed in another tab meanwhile: this tab's Remove is refused in the hub's words and the list read again.
  await t.client(owner.key).agents.removeMember(id, viaInvite.id);
  answerNextDialog(page, true);
  await byInvite.getByRole('button', { name: 'Remove' }).click();
  await sharing.getByRole('alert').filter({ hasText: 'no such member (404, code 4040)' }).waitFor();
  await byInvite.waitFor({ state: 'detached' });
  await sharing.getByText('Members (0)').waitFor();
  await sharing.getByText('Nobody has joined yet.').waitFor();
});

test("an agent's stats and its row in the list follow its runs; a host offline reads so in the list", { skip }, async () => {
  const { page } = tab;
  const { credential } = await pairHost(t, owner.key, 'runner');
  host = await connectFakeHost(t, credential, { name: 'runner', capacity: 2 });
  endRunsAtOnce(host, { inputTokens: 1200, outputTokens: 300 });
  const c = t.client(owner.key);
  const agent = await agentWhenReady(c, { name: 'busy-bot', scope: 'private', hostId: host.hostId!, engine: 'claude-code', workDir: 'svc/api' });
  const { sessionId } = (await c.sessions.create({ agentId: agent.id, content: 'first' })) as AcceptedRun; // with content: the message's answer
  await eventually(async () => (await c.agents.stats(agent.id)).runs === 1);
  await c.sessions.send(sessionId, { content: 'second' });
  await eventually(async () => (await c.agents.stats(agent.id)).runs === 2);
  const stats = await c.agents.stats(agent.id);
  assert.deepEqual([stats.usageCount, stats.sessionCount, stats.runs], [1, 1, 2]);
  assert.ok(stats.cost > 0 && stats.cost !== stats.earn, `a cost to show apart from the earnings: ${JSON.stringify(stats)}`);

  await page.goto(`${t.url}/agents/${encodeURIComponent(agent.id)}`);
  await page.getByText('runner (online) · claude-code · svc/api').waitFor(); // the work directory after the engine
  const facts = page.getByRole('region', { name: 'Stats' });
  const fact = async (name: string) => (await facts.locator('dt', { hasText: name }).locator('+ dd').textContent())!;
  await facts.getByText('Runs').waitFor();
  assert.deepEqual(
    [await fact('Uses'), await fact('Sessions'), await fact('Runs'), await fact('Cost (tokens)'), await fact('Earned')],
    [String(stats.usageCount), String(stats.sessionCount), '2', String(stats.cost), String(stats.earn)],
  );
  assert.notEqual(await fact('Last used'), 'never');

  const quiet = await privateAgent('quiet-bot');
  await page.getByRole('link', { name: '← My agents' }).click();
  const row = page.getByRole('listitem', { name: 'busy-bot' });
  await row.getByText('2 runs').waitFor();
  await row.getByText('1 session', { exact: true }).waitFor();
  await row.getByText('1 use', { exact: true }).waitFor();
  await row.getByText('runner', { exact: true }).waitFor();
  await page.getByRole('listitem', { name: 'quiet-bot' }).getByText('old-box (offline)').waitFor();
  assert.equal((await c.agents.manage(quiet)).hostUp, false);
});

test('My agents in pages of 20: Next and Previous, Next disabled on the last page', { skip }, async () => {
  const { page } = tab;
  const have = (await t.client(owner.key).agents.mine({ pageSize: 1 })).total;
  for (let i = have; i < 23; i++) await privateAgent(`filler-${i}`);
  await page.goto(`${t.url}/agents`);
  const pages = page.getByRole('navigation', { name: 'Pages' });
  await pages.getByText('Page 1 of 2').waitFor();
  assert.equal(await page.getByRole('list', { name: 'My agents' }).getByRole('listitem').count(), 20);
  assert.ok(await pages.getByRole('button', { name: 'Previous' }).isDisabled());
  await pages.getByRole('button', { name: 'Next' }).click();
  await pages.getByText('Page 2 of 2').waitFor();
  await eventually(async () => (await page.getByRole('list', { name: 'My agents' }).getByRole('listitem').count()) === 3);
  assert.ok(await pages.getByRole('button', { name: 'Next' }).isDisabled(), 'the last page');
  await pages.getByRole('button', { name: 'Previous' }).click();
  await pages.getByText('Page 1 of 2').waitFor();
});

test('My agents: a page the list no longer reaches (agents deleted elsewhere) moves to the last page, not "No agents yet"', { skip }, async () => {
  const { page } = tab;
  const c = t.client(owner.key);
  const all = await c.agents.mine({ pageSize: 100, sort: 'recent' });
  assert.ok(all.total > 20 && all.total <= 40, `two pages: ${all.total}`);
  await page.goto(`${t.url}/agents`);
  const pages = page.getByRole('navigation', { name: 'Pages' });
  await pages.getByRole('button', { name: 'Next' }).click();
  await pages.getByText('Page 2 of 2').waitFor();
  const shown = page.getByRole('list', { name: 'My agents' }).getByRole('listitem');
  await eventually(async () => (await shown.count()) === all.total - 20);
  // Elsewhere, agents go until twenty are left; the one this page still shows last stays.
  const onPage = all.items.slice(20);
  const kept = onPage[onPage.length - 1];
  for (const a of [...onPage.slice(0, -1), ...all.items.slice(0, 1)].slice(0, all.total - 20)) await c.agents.remove(a.id);
  // Its switch reloads the list: page two is empty now, and the page goes back to page one, where it is.
  await page.getByRole('listitem', { name: kept.displayName }).getByRole('switch', { name: 'Enabled' }).click();
  await page.getByRole('list', { name: 'My agents' }).getByRole('listitem').nth(19).waitFor();
  assert.equal(await shown.count(), 20);
  assert.equal(await page.getByText('No agents yet').count(), 0, 'the owner has agents');
  assert.equal(await pages.count(), 0, 'twenty fit on one page');
  await page.getByRole('listitem', { name: kept.displayName }).waitFor();
});

test("a rejected agent shows the reason and can be resubmitted; toggling, saving or deleting an agent gone meanwhile reads as a message", { skip }, async () => {
  const { page } = tab;
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'rejected-bot', scope: 'public', hostId: offlineHost, engine: 'claude-code', step: 'submit' } });
  assert.equal(c.status, 201, c.text);
  const id: string = c.body.data.id;
  const r = await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(id)}/reject`, { token: t.adminKey, body: { reason: 'say what it does' } });
  assert.equal(r.status, 200, r.text);

  await page.goto(`${t.url}/agents/${encodeURIComponent(id)}`);
  const controls = page.locator('.controls').first();
  await controls.getByText('Rejected: say what it does').waitFor();
  await controls.getByRole('button', { name: 'Submit for review' }).click();
  await page.locator('.badges').getByText('review pending').waitFor();
  assert.equal((await t.api('GET', `${path(id)}/manage`, { token: owner.key })).body.data.usageStatus, 'reviewing');
  assert.equal(await controls.getByText('Rejected:').count(), 0, 'the reason goes with the resubmission');

  const d = await t.api('DELETE', path(id), { token: owner.key });
  assert.equal(d.status, 204, d.text);
  await controls.getByRole('switch', { name: 'Enabled' }).click();
  await controls.getByRole('alert').getByText(/agent not found/).waitFor();
  const form = page.getByRole('form', { name: 'Edit agent' });
  await form.getByLabel('Description').fill('too late');
  await form.getByRole('button', { name: 'Save', exact: true }).click();
  await form.getByRole('alert').getByText(/agent not found/).waitFor();
  const danger = page.getByRole('region', { name: 'Delete' });
  await danger.getByRole('button', { name: 'Delete…' }).click();
  await danger.getByRole('button', { name: 'Delete agent' }).click();
  await danger.getByRole('alert').getByText(/agent not found/).waitFor();
  assert.match(new URL(page.url()).pathname, /^\/agents\/.+/, 'the page stays, the message says why');
});
