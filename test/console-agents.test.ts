// The My agents pages in a real browser against a real hub and the real
// agent-host CLI (fake claude): create an agent through the form — "Suggest",
// the host and engine pickers, the work-directory browser — submit it for
// review, approve it as administrator over the API, toggle enable; limits
// shown inline, sharing, stats, an error envelope as a sentence, delete.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { makeFakeClaude, spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';
import { closeConsoleTest, noBrowser, openConsole, signInAs, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const tmp = mkdtempSync(join(tmpdir(), 'console-agents-'));
let t: TestHub;
let user: { id: string; key: string };
let browser: ConsoleTab;
let host: AgentHostProcess;
let agentId: string;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  user = await t.user('owner');
  const root = join(tmp, 'root');
  mkdirSync(join(root, 'projects', 'reviewer'), { recursive: true });
  mkdirSync(join(root, 'scratch'));
  const k = await t.api('POST', '/api/v1/hosts/pair-key', { token: user.key });
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', k.body.data.pairKey, '--work-root', root, '--name', 'dev-box'], {
    AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: makeFakeClaude(tmp), CLAUDE_CONFIG_DIR: join(tmp, 'claude-config'),
  });
  await host.waitFor(/connected to/, 60_000); // a cold tsx start on a busy machine is slow
  browser = await openConsole(t.url);
  await signInAs(browser.page, t.url, user.key);
});

after(async () => {
  host?.kill('SIGKILL');
  await closeConsoleTest(browser, {
    failedLoadsProvoked: true,
    then: [() => t?.close(), () => rmSync(tmp, { recursive: true, force: true })],
  });
});

/** What the keyword rules make of the description below (its first six words). */
const DISPLAY = 'Reviews TypeScript pull requests and finds';

const manage = async (id: string) => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}/manage`, { token: user.key })).body.data;

test('create through the form: suggest, limits inline, host and engine pickers, directory browser, submit for review', { skip }, async () => {
  const { page } = browser;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My agents' }).click();
  await page.getByText('No agents yet').waitFor();
  await shot(page, 'agents-empty');
  await page.getByRole('link', { name: 'New agent' }).click();
  const form = page.getByRole('form', { name: 'New agent' });

  // Suggest (ai-fill; no model configuration, so the keyword rules answer).
  await form.getByLabel('What should the agent do?').fill('Reviews TypeScript pull requests and finds bugs before merge.');
  await form.getByRole('button', { name: 'Suggest' }).click();
  await form.getByText('Suggested from keywords').waitFor();
  assert.equal(await form.getByLabel('Display name').inputValue(), DISPLAY);
  assert.equal(await form.getByLabel('Category').inputValue(), 'coding');
  assert.match(await form.getByLabel('Tags').inputValue(), /\bbugs\b/);

  // The limits are shown beside the fields and follow the typing.
  await form.getByLabel('Name', { exact: true }).fill('pr-reviewer');
  await form.getByText('11/80 · 1–80 characters').waitFor();
  await form.getByLabel('Work directory').fill('../etc');
  await form.getByText('must not contain “..”').waitFor();
  assert.ok(await form.getByRole('button', { name: 'Create', exact: true }).isDisabled(), 'a bad workDir blocks saving');

  // Pickers from available-hosts: the host, then its engine.
  await form.getByLabel('Scope').selectOption('public');
  // What the guests' ceiling gives strangers on the owner's machine is said beside it; `auto` as a warning.
  assert.match((await form.getByTestId('guest-mode-note').textContent())!, /edits and commands are refused/);
  await form.getByLabel('Others may use modes up to').selectOption('auto');
  assert.match((await form.getByTestId('guest-mode-note').textContent())!, /run any command on your machine as you/);
  assert.equal(await form.getByTestId('guest-mode-note').getAttribute('class'), 'bad');
  await form.getByLabel('Others may use modes up to').selectOption('default');
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'dev-box (online)' });
  assert.equal(await form.getByLabel('Engine').inputValue(), 'claude-code');

  // The directory browser lists the host's work root through the hub.
  await form.getByRole('button', { name: 'Browse…' }).click();
  const dirs = form.getByRole('region', { name: 'Work directory browser' });
  await dirs.getByRole('button', { name: 'Open projects' }).click();
  await dirs.getByRole('button', { name: 'Use reviewer' }).waitFor();
  await shot(page, 'agents-new');
  await dirs.getByRole('button', { name: 'Use reviewer' }).click();
  assert.equal(await form.getByLabel('Work directory').inputValue(), 'projects/reviewer');

  await form.getByRole('button', { name: 'Create and submit for review' }).click();
  await page.getByRole('heading', { name: DISPLAY, level: 1 }).waitFor();
  agentId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]);
  await page.getByText('Waiting for an administrator').first().waitFor();
  const a = await manage(agentId);
  assert.equal(a.usageStatus, 'reviewing');
  assert.equal(a.reviewStatus, 'pending');
  assert.equal(a.workDir, 'projects/reviewer');
  assert.equal(a.engine, 'claude-code');
  assert.equal(a.hostName, 'dev-box');
  assert.equal(a.category, 'coding');
  await shot(page, 'agent-reviewing');
});

test('approved by an administrator (API), then disabled and enabled from the page; stats and sharing shown', { skip }, async () => {
  const { page } = browser;
  const r = await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(agentId)}/approve`, { token: t.adminKey });
  assert.equal(r.status, 200, r.text);
  await page.reload();
  const controls = page.locator('.controls').first();
  await page.locator('.badges').getByText('review approved').waitFor();
  await page.locator('.badges').getByText('online').waitFor();
  await page.getByRole('region', { name: 'Stats' }).getByText('Shared with').waitFor();
  await page.getByTestId('share-link').waitFor();
  assert.match((await page.getByTestId('share-link').textContent())!, new RegExp(`^${t.url}/invites/\\S+$`));
  await page.getByText('Nobody has joined yet').waitFor();
  await shot(page, 'agent-page');

  await controls.getByRole('switch', { name: 'Enabled' }).click();
  await page.locator('.badges').getByText('disabled').waitFor();
  assert.equal((await manage(agentId)).enable, false);
  assert.equal(await controls.getByRole('switch', { name: 'Enabled' }).getAttribute('aria-checked'), 'false');
  await controls.getByRole('switch', { name: 'Enabled' }).click();
  await eventually(async () => (await manage(agentId)).enable === true);
  await page.locator('.badges').getByText('disabled').waitFor({ state: 'detached' });

  // The list shows it with its state and host.
  await page.getByRole('link', { name: '← My agents' }).click();
  const row = page.getByRole('listitem', { name: DISPLAY });
  await row.getByText('dev-box').waitFor();
  await row.getByText('review approved').waitFor();
  await shot(page, 'agents-list');
});

test('an error envelope is a readable message; delete with confirmation', { skip }, async () => {
  const { page } = browser;
  await page.goto(`${t.url}/agents/${encodeURIComponent('nobody/nothing')}`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match((await alert.textContent())!, /agent not found \(404, code \d+\)/);

  await page.goto(`${t.url}/agents/${encodeURIComponent(agentId)}`);
  // Cancel takes the question back; nothing is deleted.
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.getByRole('group', { name: 'Confirm delete' }).getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Delete…' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Delete agent' }).count(), 0);
  assert.equal((await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/manage`, { token: user.key })).status, 200);
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.getByRole('button', { name: 'Delete agent' }).click();
  await page.getByText('No agents yet').waitFor();
  assert.equal((await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/manage`, { token: user.key })).status, 404);
});
