// The agent form in a real browser, beyond creating one (console-agents):
// what it says and blocks while no host is online, a private agent (always
// free, no review) saved as a draft and published, an edit that keeps an
// offline host's binding or changes host or engine, and the work-directory
// browser's moves — against a real hub and fake hosts over the real channel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { CLAUDE_ENGINE, connectFakeHost, eventually, pairHost, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';
import type { Engine, HostToHub, HubToHost } from '../host-protocol/frames.js';
import { Host } from '../src/hosts/entities.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let offlineHost: string;
const hosts: FakeHost[] = [];

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('form-owner');
  offlineHost = await seedHost(t, owner.id, ['claude-code'], 'old-box');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, owner.key);
});

after(async () => {
  if (skip) return;
  for (const h of hosts) h.close();
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

const CODEX = { id: 'codex', displayName: 'Codex' };

/** A host of the owner's on the real channel, once the hub lists it among the available ones with its engines. */
async function onlineHost(name: string, opts: { engines?: Engine[]; answer?: (f: HubToHost & { id: number }) => HostToHub | undefined } = {}): Promise<string> {
  const { hostId, credential } = await pairHost(t, owner.key, name);
  hosts.push(await connectFakeHost(t, credential, { name, ...opts }));
  const engines = opts.engines ?? [CLAUDE_ENGINE];
  await eventually(async () => (await t.client(owner.key).agents.availableHosts()).find((h) => h.id === hostId && h.engines.length === engines.length));
  return hostId;
}

const manage = async (id: string) => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}/manage`, { token: owner.key })).body.data;

test('with no host online the form says so and blocks what needs one; Reload hosts finds a host that came since; a host with no engine says so', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/agents/new`);
  const form = page.getByRole('form', { name: 'New agent' });
  await form.getByText('No host is online').waitFor();
  assert.ok(await form.getByRole('button', { name: 'Browse…' }).isDisabled(), 'no host: nothing to browse');
  assert.ok(await form.getByRole('button', { name: 'Suggest' }).isDisabled(), 'nothing described: nothing to suggest from');
  assert.ok(await form.getByRole('button', { name: 'Create', exact: true }).isDisabled(), 'no name: nothing to create');
  assert.ok(await form.getByRole('button', { name: 'Save as draft' }).isDisabled());

  await onlineHost('bare-box', { engines: [] });
  assert.equal(await form.getByLabel('Host', { exact: true }).getByRole('option', { name: 'bare-box (online)' }).count(), 0, 'the list is the one loaded');
  await form.getByRole('button', { name: 'Reload hosts' }).click();
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'bare-box (online)' });
  await form.getByText('This host reports no engine.').waitFor();
  assert.equal(await form.getByText('No host is online').count(), 0);
});

test('a private agent is always free and never reviewed: saved as a draft under its name, then published from its page', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/agents/new`);
  const form = page.getByRole('form', { name: 'New agent' });
  await form.getByLabel('Name', { exact: true }).fill('notes-bot');
  await form.getByLabel('Scope').selectOption('public');
  await form.getByLabel('Pricing').selectOption('paid');
  await form.getByRole('button', { name: 'Create and submit for review' }).waitFor();
  await form.getByLabel('Scope').selectOption('private');
  await form.getByText('private agents are always free').waitFor();
  assert.ok(await form.getByLabel('Pricing').isDisabled());
  assert.equal(await form.getByLabel('Pricing').inputValue(), 'free');
  assert.equal(await form.getByRole('button', { name: 'Create and submit for review' }).count(), 0, 'a private agent is not reviewed');

  await form.getByRole('button', { name: 'Save as draft' }).click();
  await page.getByRole('heading', { name: 'notes-bot', level: 1 }).waitFor();
  const id = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]);
  const a = await manage(id);
  assert.deepEqual([a.usageStatus, a.scope, a.pricing, a.displayName, a.enable], ['draft', 'private', 'free', 'notes-bot', false]);

  await page.locator('.badges').getByText('draft').waitFor();
  await page.locator('.controls').getByRole('button', { name: 'Publish' }).click();
  await page.locator('.badges').getByText('online').waitFor();
  assert.equal((await manage(id)).usageStatus, 'online');
  assert.equal(await page.locator('.controls').getByRole('button', { name: 'Publish' }).count(), 0, 'published: nothing to publish');
});

test("an edit keeps an offline host's binding as it is; picking another host, or only another engine, saves that", { skip }, async () => {
  const { page } = tab;
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'bound-bot', scope: 'private', hostId: offlineHost, engine: 'claude-code' } });
  assert.equal(c.status, 201, c.text);
  const id: string = c.body.data.id;
  const twoEngines = await onlineHost('two-engines', { engines: [CLAUDE_ENGINE, CODEX] });

  await page.goto(`${t.url}/agents/${encodeURIComponent(id)}`);
  await page.getByText('old-box (offline) · claude-code').waitFor();
  const form = page.getByRole('form', { name: 'Edit agent' });
  const hostPicker = form.getByLabel('Host', { exact: true });
  await hostPicker.getByRole('option', { name: 'two-engines (online)' }).waitFor({ state: 'attached' });
  assert.equal(await hostPicker.inputValue(), offlineHost, 'the offline host stays picked');
  assert.equal(await hostPicker.locator('option:checked').textContent(), 'old-box (offline)');
  assert.equal(await form.getByLabel('Engine').inputValue(), 'claude-code');

  // The host's last report, before it went offline, no longer had the agent's engine: the binding is
  // not the owner's to re-check while the host is away, and a description edit must not fail on it.
  const em = t.hub.ctx.em();
  const old = await em.findOneOrFail(Host, { id: offlineHost });
  old.engines = [CODEX];
  await em.flush();
  await form.getByLabel('Description').fill('Keeps notes');
  await form.getByRole('button', { name: 'Save', exact: true }).click();
  await eventually(async () => (await manage(id)).description === 'Keeps notes');
  assert.equal(await form.getByRole('alert').count(), 0);
  let a = await manage(id);
  assert.deepEqual([a.hostId, a.engine], [offlineHost, 'claude-code']);

  await hostPicker.selectOption({ label: 'two-engines (online)' });
  assert.equal(await form.getByLabel('Engine').inputValue(), 'claude-code', "the host's first engine");
  await form.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('two-engines (online) · claude-code').waitFor();
  a = await manage(id);
  assert.deepEqual([a.hostId, a.engine], [twoEngines, 'claude-code']);

  await form.getByLabel('Engine').selectOption('codex');
  await form.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('two-engines (online) · codex').waitFor();
  a = await manage(id);
  assert.deepEqual([a.hostId, a.engine], [twoEngines, 'codex']);
});

test('the directory browser starts at the directory typed, goes up, shows an empty and a cut-short listing, picks the one shown, and closes', { skip }, async () => {
  const { page } = tab;
  const tree: Record<string, string[]> = { '': ['projects', 'scratch', 'many'], projects: ['reviewer'], scratch: [], many: ['a', 'b'] };
  await onlineHost('dirs-box', {
    answer: (f) => {
      if (f.t === 'engines.refresh') return { t: 'reply', id: f.id, ok: true, data: { engines: [CLAUDE_ENGINE] } };
      if (f.t !== 'dirs.list') return undefined;
      const entries = (tree[f.path] ?? []).map((name) => ({ name, path: f.path ? `${f.path}/${name}` : name }));
      return { t: 'reply', id: f.id, ok: true, data: { path: f.path, entries, ...(f.path === 'many' ? { truncated: true } : {}) } };
    },
  });
  await page.goto(`${t.url}/agents/new`);
  const form = page.getByRole('form', { name: 'New agent' });
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'dirs-box (online)' });
  await form.getByLabel('Work directory').fill('projects');
  await form.getByRole('button', { name: 'Browse…' }).click();
  const dirs = form.getByRole('region', { name: 'Work directory browser' });
  await dirs.getByText('Work root / projects').waitFor();
  await dirs.getByRole('button', { name: 'Use reviewer' }).waitFor();

  await dirs.getByRole('button', { name: '↑ Up' }).click();
  await dirs.getByRole('button', { name: 'Open scratch' }).click();
  await dirs.getByText('Work root / scratch').waitFor();
  await dirs.getByText('No directories here.').waitFor();
  await dirs.getByRole('button', { name: 'Use this directory' }).click();
  await dirs.waitFor({ state: 'detached' });
  assert.equal(await form.getByLabel('Work directory').inputValue(), 'scratch');

  await form.getByRole('button', { name: 'Browse…' }).click();
  await dirs.getByText('Work root / scratch').waitFor();
  await dirs.getByRole('button', { name: '↑ Up' }).click();
  await dirs.getByText('Work root', { exact: true }).waitFor();
  assert.equal(await dirs.getByRole('button', { name: '↑ Up' }).count(), 0, 'the work root has nothing above it');
  await dirs.getByRole('button', { name: 'Open many' }).click();
  await dirs.getByText('Only the first directories are shown.').waitFor();
  await dirs.getByRole('button', { name: 'Close' }).click();
  await dirs.waitFor({ state: 'detached' });
  assert.equal(await form.getByLabel('Work directory').inputValue(), 'scratch', 'closing picks nothing');
});
