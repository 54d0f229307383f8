// My agents' rows and controls in detail, in a real Chromium, on a hub of its own: each figure of a row
// its own number (uses, sessions, runs, favorites, version), a draft with no host nor engine, the scope
// badge, the review badge's tone, the enable switch held ("Saving…") and the row read again after it,
// "Publish" held ("Submitting…"), which agents are offered a submission, and an agent's page (its facts
// line, its stats, Delete asked in words and held).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { agentWhenReady, connectFakeHost, endRunsAtOnce, eventually, pairHost, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';
import type { AcceptedRun } from '../src/client/index.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let host: FakeHost;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('lister');
  const { credential } = await pairHost(t, owner.key, 'box');
  host = await connectFakeHost(t, credential, { name: 'box', capacity: 2 });
  endRunsAtOnce(host, { inputTokens: 100, outputTokens: 10 });
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, owner.key);
});

after(async () => {
  if (skip) return;
  host?.close();
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

const rowOf = (name: string) => tab.page.getByRole('list', { name: 'My agents' }).getByRole('listitem', { name });
const isPatch = (id: string) => (url: URL, method: string) => method === 'PATCH' && url.pathname === `/api/v1/agents/${encodeURIComponent(id)}`;

test("a row's figures, each its own: uses, sessions, runs, favorites and version; a draft with no host nor engine; the scope", { skip }, async () => {
  const { page } = tab;
  const c = t.client(owner.key);
  const agent = await agentWhenReady(c, { name: 'counted-bot', scope: 'private', hostId: host.hostId!, engine: 'claude-code' });
  // One user (the owner), two sessions, three runs, one favorite, version 2 (published again).
  const first = (await c.sessions.create({ agentId: agent.id, content: 'one' })) as AcceptedRun;
  await eventually(async () => (await c.agents.stats(agent.id)).runs === 1);
  await c.sessions.send(first.sessionId, { content: 'two' });
  await eventually(async () => (await c.agents.stats(agent.id)).runs === 2);
  await c.sessions.create({ agentId: agent.id, content: 'three' });
  await eventually(async () => (await c.agents.stats(agent.id)).runs === 3);
  await c.market.favorite(agent.id, true);
  await c.agents.update(agent.id, { step: 'submit' });
  const m = await c.agents.manage(agent.id);
  assert.deepEqual([m.usageCount, m.sessionCount, m.runs, m.favoriteCount, m.version], [1, 2, 3, 1, 2]);
  const draft = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'bare-draft', scope: 'public', step: 'draft' } });
  assert.equal(draft.status, 201, draft.text);

  await page.goto(`${t.url}/agents`);
  const row = rowOf('counted-bot');
  await row.waitFor();
  const facts = await row.locator('.meta span').allTextContents();
  assert.deepEqual(facts, ['box', 'claude-code', '1 use', '2 sessions', '3 runs', '★ 1', 'v2']);
  await row.locator('.badge', { hasText: 'private' }).waitFor();
  const bare = rowOf('bare-draft');
  assert.deepEqual((await bare.locator('.meta span').allTextContents()).slice(0, 2), ['no host', 'no engine']);
  await bare.locator('.badge', { hasText: 'public' }).waitFor();
  assert.deepEqual(tab.pageErrors, []);
});

test('the review badge says how the review went in its tone: approved, pending, rejected', { skip }, async () => {
  const { page } = tab;
  const made = async (name: string) => {
    const r = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, scope: 'public', hostId: host.hostId!, engine: 'claude-code', step: 'submit' } });
    assert.equal(r.status, 201, r.text);
    return r.body.data.id as string;
  };
  const approved = await made('approved-bot');
  const rejected = await made('rejected-bot');
  await made('pending-bot');
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(approved)}/approve`, { token: t.adminKey })).status, 200);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(rejected)}/reject`, { token: t.adminKey, body: { reason: 'too vague' } })).status, 200);
  await page.goto(`${t.url}/agents`);
  const tone = async (name: string, text: string) => (await rowOf(name).locator('.badge', { hasText: text }).getAttribute('class'))!.split(' ').filter((x) => x && x !== 'badge');
  await rowOf('approved-bot').waitFor();
  assert.deepEqual(await tone('approved-bot', 'review approved'), ['ok']);
  assert.deepEqual(await tone('pending-bot', 'review pending'), ['warn']);
  assert.deepEqual(await tone('rejected-bot', 'review rejected'), ['bad']);
});

test('the enable switch: "Saving…" and held while the hub works, then the row read again (disabled); a public agent never submitted is offered a submission, a private one published is not; "Publish" held while it goes', { skip }, async () => {
  const { page } = tab;
  const c = t.client(owner.key);
  const id = (await c.agents.manage((await c.agents.mine({ keyword: 'counted-bot' })).items[0].id)).id;
  await page.goto(`${t.url}/agents`);
  const row = rowOf('counted-bot');
  const sw = row.getByRole('switch', { name: 'Enabled' });
  await sw.waitFor();
  let release = await holdNext(page, isPatch(id));
  await sw.click();
  await sw.getByText('Saving…').waitFor();
  assert.ok(await sw.isDisabled(), 'held while the hub works');
  await release();
  await row.locator('.badge', { hasText: 'disabled' }).waitFor();
  assert.equal(await sw.getAttribute('aria-checked'), 'false');
  assert.equal(await sw.textContent(), 'Disabled');
  assert.equal(await row.getByRole('button', { name: /Publish|Submit/ }).count(), 0, 'a private agent published is offered no submission');

  const pub = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'unsubmitted-bot', scope: 'public', hostId: host.hostId!, engine: 'claude-code' } });
  assert.equal(pub.status, 201, pub.text);
  const draft = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'private-draft', scope: 'private', hostId: host.hostId!, engine: 'claude-code', step: 'draft' } });
  assert.equal(draft.status, 201, draft.text);
  await page.reload();
  await rowOf('unsubmitted-bot').getByRole('button', { name: 'Submit for review' }).waitFor();
  const publish = rowOf('private-draft').getByRole('button', { name: 'Publish' });
  release = await holdNext(page, isPatch(draft.body.data.id));
  await publish.click();
  const submitting = rowOf('private-draft').getByRole('button', { name: 'Submitting…' });
  await submitting.waitFor();
  assert.ok(await submitting.isDisabled());
  await release();
  await rowOf('private-draft').locator('.badge', { hasText: 'online' }).waitFor();
  assert.equal(await rowOf('private-draft').getByRole('button', { name: /Publish|Submit/ }).count(), 0);
  assert.deepEqual(tab.pageErrors, []);
});

test("an agent's page: its facts line, every stat its own figure, a draft with none; Delete asks in words, holds while the hub works, then goes back to the list", { skip }, async () => {
  const { page } = tab;
  const c = t.client(owner.key);
  const counted = (await c.agents.mine({ keyword: 'counted-bot' })).items[0];
  // Shared with one member, so that figure is not the 0 every other agent has.
  const token = (await c.agents.shareLink(counted.id)).token;
  const member = await t.user('member');
  assert.equal((await t.api('POST', `/api/v1/invites/${encodeURIComponent(token)}/decide`, { token: member.key, body: { accept: true } })).status, 200);
  const m = await c.agents.manage(counted.id);
  await page.goto(`${t.url}/agents/${encodeURIComponent(counted.id)}`);
  await page.getByText(`${m.id} · version 2 · box (online) · claude-code${m.workDir ? ` · ${m.workDir}` : ''}`, { exact: true }).waitFor();
  const facts = page.getByRole('region', { name: 'Stats' });
  await facts.getByText('Shared with').waitFor();
  const shown = Object.fromEntries(await facts.locator('dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
  assert.deepEqual([shown.Favorites, shown['Shared with']], ['1', '1']);
  assert.notEqual(shown['Last used'], 'never');

  const bare = (await c.agents.mine({ keyword: 'bare-draft' })).items[0];
  await page.goto(`${t.url}/agents/${encodeURIComponent(bare.id)}`);
  await page.getByText(`${bare.id} · version 1 · no host · no engine`, { exact: true }).waitFor();
  await facts.getByText('never', { exact: true }).waitFor();

  const danger = page.getByRole('region', { name: 'Delete' });
  await danger.getByRole('button', { name: 'Delete…' }).click();
  await danger.getByText('Delete “bare-draft” and all its sessions? This cannot be undone.').waitFor();
  const release = await holdNext(page, (url, method) => method === 'DELETE' && url.pathname === `/api/v1/agents/${encodeURIComponent(bare.id)}`);
  await danger.getByRole('button', { name: 'Delete agent' }).click();
  const deleting = danger.getByRole('button', { name: 'Deleting…' });
  await deleting.waitFor();
  assert.ok(await deleting.isDisabled());
  await release();
  await page.waitForURL(/\/agents$/);
  await page.getByRole('list', { name: 'My agents' }).waitFor();
  assert.equal(await rowOf('bare-draft').count(), 0);
  assert.deepEqual(tab.pageErrors, []);
});
