// The Models page in a real Chromium, against a local model endpoint and a real
// agent-host CLI (fake engine): create a configuration (the key never shown
// again, only its hint), the connectivity test with its `reason`, edit, apply
// to the host and revert, and the host's sync state following live (polled)
// through `pending` while the host is busy and `idle` once it is delivered;
// with two configurations the picker starting at the host's own; the openai
// format and Cancel; a settings file the host cannot read back shown as
// `failed` with the host's reason; a configuration deleted elsewhere refused on
// Apply, with "Sending to the host…" while the hub is asked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';
import { startMessagesEndpoint, type MessagesEndpoint } from './helpers/model-endpoint.js';
import { closeConsoleTest, answerNextDialog, noBrowser, openConsole, shot, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const FAKE_CLAUDE = resolve(import.meta.dirname, 'fixtures/fake-claude.mjs');
const KEY = 'sk-console-KEY-0123456789abcdef';
const ORIGINAL = JSON.stringify({ env: { HTTP_PROXY: 'http://proxy.local:3128' } }, null, 2) + '\n';

let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };
let endpoint: MessagesEndpoint;
let endpointUrl: string;
let tmp: string;
let settingsFile: string;
let proc: AgentHostProcess;
let hostId: string;

const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: u.key, body });
const settings = () => JSON.parse(readFileSync(settingsFile, 'utf8'));

before(async () => {
  if (skip) return;
  endpoint = await startMessagesEndpoint(KEY);
  endpointUrl = endpoint.url;
  // The hub's egress rule refuses loopback unless told otherwise.
  t = await startTestHub({ rateLimitModelTestPerMinute: 0 } as any, { MODEL_TEST_ALLOW_PRIVATE: '1' });
  u = await t.user('modeller');
  tmp = mkdtempSync(join(tmpdir(), 'console-models-'));
  const claudeDir = join(tmp, 'claude-config');
  mkdirSync(join(tmp, 'work', 'proj'), { recursive: true });
  mkdirSync(claudeDir);
  settingsFile = join(claudeDir, 'settings.json');
  writeFileSync(settingsFile, ORIGINAL);
  const pairKey = (await api('POST', '/api/v1/hosts/pair-key')).body.data.pairKey;
  proc = spawnAgentHost(['run', '--work-root', join(tmp, 'work'), '--capacity', '1', '--hub', t.url, '--pair-key', pairKey, '--name', 'laptop'], {
    AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: claudeDir,
  });
  hostId = (await proc.waitFor(/connected to \S+ as hst_\w+/, 90_000)).match(/hst_\w+/)![0];
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, {
    failedLoadsProvoked: true, // the refused apply
    then: [
      () => proc?.kill('SIGKILL'),
      () => t.close(),
      () => endpoint.close(),
      () => rmSync(tmp, { recursive: true, force: true }),
    ],
  });
});

test('create a configuration: the test shows its reason, then passes; the key is never shown again', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('link', { name: 'Models' }).click();
  await page.getByText('No model configurations yet.').waitFor();
  await page.locator(`tr[data-host="${hostId}"]`).getByText('default', { exact: true }).waitFor();
  await page.getByText('Create a configuration above to apply it to a host.').waitFor();
  assert.ok(await page.locator(`tr[data-host="${hostId}"]`).getByRole('button', { name: 'Revert to default' }).isDisabled(), 'a host at its default has nothing to revert');
  await page.getByRole('button', { name: 'New configuration' }).click();
  const form = page.getByRole('form', { name: 'New model configuration' });
  await form.getByLabel('Name', { exact: true }).fill('Local endpoint');
  await form.getByLabel('Base URL').fill(endpointUrl);
  await form.getByLabel('API key').fill('sk-wrong-key-000000');
  await form.getByLabel('Model name').fill('model-one');
  await form.getByRole('button', { name: 'Test connection' }).click();
  const failed = form.getByRole('alert').filter({ hasText: 'failed' });
  await failed.getByText('auth', { exact: true }).waitFor();
  assert.match((await failed.textContent())!, /refused the key/);
  await form.getByLabel('API key').fill(KEY);
  await form.getByRole('button', { name: 'Test connection' }).click();
  await form.getByRole('status').filter({ hasText: 'passed' }).filter({ hasText: 'auth mode x-api-key' }).waitFor();
  await form.getByText('Reply: “pong”').waitFor();
  await form.getByRole('button', { name: 'Create' }).click();
  const row = page.locator('tr[data-config]');
  await row.getByText('Local endpoint').waitFor();
  assert.ok(!(await page.content()).includes(KEY), 'the key is not on the page');
  const stored = (await api('GET', '/api/v1/model-configs')).body.data.items[0];
  assert.equal(stored.modelName, 'model-one');
  assert.ok(await row.getByText(stored.apiKeyHint).isVisible(), 'the hint is shown');
  assert.deepEqual(tab.pageErrors, []);
});

test('edit keeps the stored key (shown as its hint) and a stored test passes', { skip }, async () => {
  const { page } = tab;
  const row = page.locator('tr[data-config]');
  await row.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit Local endpoint' });
  const hint = (await api('GET', '/api/v1/model-configs')).body.data.items[0].apiKeyHint;
  assert.match((await form.getByLabel('API key').getAttribute('placeholder'))!, new RegExp(hint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  assert.equal(await form.getByLabel('API key').inputValue(), '');
  // The form's own test, with no key typed, tests with the stored one.
  await form.getByRole('button', { name: 'Test connection' }).click();
  await form.getByRole('status').filter({ hasText: 'passed' }).waitFor();
  await form.getByLabel('Model name').fill('model-two');
  await form.getByRole('button', { name: 'Save' }).click();
  await row.getByText('anthropic · model-two').waitFor();
  await row.getByRole('button', { name: 'Test' }).click();
  await row.getByRole('status').filter({ hasText: 'passed' }).waitFor();
  assert.deepEqual(tab.pageErrors, []);
});

test('apply to the host → idle; an edit while the host is busy shows pending, then idle, live; revert → default', { skip }, async () => {
  const { page } = tab;
  const cfg = (await api('GET', '/api/v1/model-configs')).body.data.items[0];
  const host = page.locator(`tr[data-host="${hostId}"]`);
  await host.getByRole('button', { name: 'Apply' }).click();
  await host.locator('[data-sync]').filter({ hasText: 'idle' }).waitFor();
  assert.equal(settings().env.ANTHROPIC_BASE_URL, endpointUrl);
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-two');
  await page.locator('tr[data-config]').locator('td.num').filter({ hasText: '1' }).waitFor();
  await shot(page, 'models');

  // A turn keeps the host busy; an edit made elsewhere (the API) waits as `pending`, and the page follows by itself.
  const agent = await api('POST', '/api/v1/agents', { name: 'busy', displayName: 'Busy', desc: 'x', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' });
  assert.equal(agent.status, 201, agent.text);
  const s = await api('POST', '/api/v1/sessions', { agentId: agent.body.data.id, content: 'work slowly [sleep:4000]' });
  assert.equal(s.status, 202, s.text);
  await eventually(async () => (await api('GET', `/api/v1/hosts/${hostId}`)).body.data.running === 1);
  await host.getByText('1 running').waitFor();
  assert.equal((await api('PATCH', `/api/v1/model-configs/${cfg.id}`, { modelName: 'model-three' })).status, 200);
  await host.locator('[data-sync]').filter({ hasText: 'pending' }).waitFor();
  await shot(page, 'models-pending');
  await host.locator('[data-sync]').filter({ hasText: 'idle' }).waitFor({ timeout: 30_000 });
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-three');

  await host.getByRole('button', { name: 'Revert to default' }).click();
  await host.getByText('default', { exact: true }).waitFor();
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL, 'the settings file is back byte for byte');
  assert.deepEqual(tab.pageErrors, []);
});

test('with two configurations the picker starts at the host\'s own and applies the one picked', { skip }, async () => {
  const { page } = tab;
  const made = await api('POST', '/api/v1/model-configs', { name: 'Second', apiType: 'anthropic', baseUrl: endpointUrl, apiKey: KEY, modelName: 'model-second' });
  assert.equal(made.status, 201, made.text);
  await page.reload();
  const host = page.locator(`tr[data-host="${hostId}"]`);
  const picker = host.getByRole('combobox', { name: 'Configuration for laptop' });
  await picker.locator('option').nth(1).waitFor({ state: 'attached' });
  const [first, second] = await picker.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  const models = new Map<string, string>((await api('GET', '/api/v1/model-configs')).body.data.items.map((c: { id: string; modelName: string }) => [c.id, c.modelName]));
  // Bound elsewhere (the API) to the one listed second: the picker starts at it, not at the first.
  const bound = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: second });
  assert.ok(bound.status < 300, bound.text);
  await eventually(async () => (await api('GET', `/api/v1/hosts/${hostId}`)).body.data.modelConfig?.status === 'idle' || undefined, 10_000, 50);
  await page.reload();
  await host.locator('[data-sync]').filter({ hasText: 'idle' }).waitFor();
  assert.equal(await picker.inputValue(), second);
  // The one picked is the one applied.
  await picker.selectOption(first);
  await host.getByRole('button', { name: 'Apply' }).click();
  await eventually(async () => {
    const b = (await api('GET', `/api/v1/hosts/${hostId}`)).body.data.modelConfig;
    return (b?.configId === first && b.status === 'idle') || undefined;
  }, 10_000, 50);
  await host.locator('[data-sync]').filter({ hasText: 'idle' }).waitFor();
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, models.get(first));
  await host.getByRole('button', { name: 'Revert to default' }).click();
  await host.getByText('default', { exact: true }).waitFor();
  assert.deepEqual(tab.pageErrors, []);
});

test('a new configuration in the openai format; Cancel closes the form and saves nothing', { skip }, async () => {
  const { page } = tab;
  const names = async () => (await api('GET', '/api/v1/model-configs')).body.data.items.map((c: { name: string }) => c.name);
  await page.getByRole('button', { name: 'New configuration' }).click();
  const form = page.getByRole('form', { name: 'New model configuration' });
  await form.getByLabel('Name', { exact: true }).fill('Not kept');
  await form.getByRole('button', { name: 'Cancel' }).click();
  await form.waitFor({ state: 'detached' });
  assert.ok(!(await names()).includes('Not kept'));
  await page.getByRole('button', { name: 'New configuration' }).click();
  await form.getByLabel('Name', { exact: true }).fill('Chat format');
  await form.getByLabel('Request format').selectOption('openai');
  await form.getByLabel('Base URL').fill(endpointUrl);
  await form.getByLabel('API key').fill(KEY);
  await form.getByLabel('Model name').fill('model-oa');
  await form.getByRole('button', { name: 'Create' }).click();
  await page.locator('tr[data-config]').getByText('openai · model-oa').waitFor();
  const made = (await api('GET', '/api/v1/model-configs')).body.data.items.find((c: { name: string }) => c.name === 'Chat format');
  assert.equal(made.apiType, 'openai');
  const gone = await api('DELETE', `/api/v1/model-configs/${made.id}`);
  assert.ok(gone.status < 300, gone.text);
  assert.deepEqual(tab.pageErrors, []);
});

test('deleting a configuration asks first: dismissed, it stays; accepted, it goes', { skip }, async () => {
  const { page } = tab;
  const made = await api('POST', '/api/v1/model-configs', { name: 'Throwaway', apiType: 'anthropic', baseUrl: endpointUrl, apiKey: KEY, modelName: 'm' });
  assert.equal(made.status, 201, made.text);
  const id: string = made.body.data.id;
  await page.reload();
  const row = page.locator(`tr[data-config="${id}"]`);
  await row.waitFor();
  const asked = answerNextDialog(page, false);
  await row.getByRole('button', { name: 'Delete' }).click();
  assert.equal(asked(), 'Delete the configuration “Throwaway”?');
  assert.equal((await api('GET', `/api/v1/model-configs/${id}`)).status, 200, 'a dismissed delete leaves it');
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal((await api('GET', `/api/v1/model-configs/${id}`)).status, 404);
  assert.deepEqual(tab.pageErrors, []);
});

test('applying a configuration deleted elsewhere: "Sending to the host…" while asked, then the refusal in the host\'s row and the lists read again', { skip }, async () => {
  const { page } = tab;
  const made = await api('POST', '/api/v1/model-configs', { name: 'Gone soon', apiType: 'anthropic', baseUrl: endpointUrl, apiKey: KEY, modelName: 'm-gone' });
  assert.equal(made.status, 201, made.text);
  const id: string = made.body.data.id;
  await page.reload();
  const host = page.locator(`tr[data-host="${hostId}"]`);
  const picker = host.getByRole('combobox', { name: 'Configuration for laptop' });
  await picker.locator(`option[value="${id}"]`).waitFor({ state: 'attached' });
  await picker.selectOption(id);
  // Deleted from another tab (the API) after this page listed it.
  assert.equal((await api('DELETE', `/api/v1/model-configs/${id}`)).status, 200);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const applyCall = (u: URL) => u.pathname === `/api/v1/hosts/${hostId}/model-config`;
  await page.route(applyCall, async (route) => {
    await held;
    await route.continue();
  });
  await host.getByRole('button', { name: 'Apply' }).click();
  await host.getByRole('status').filter({ hasText: 'Sending to the host…' }).waitFor();
  assert.ok(await host.getByRole('button', { name: 'Apply' }).isDisabled(), 'one change at a time');
  release();
  const refused = host.getByRole('alert');
  await refused.waitFor();
  assert.match((await refused.textContent())!, /model configuration not found \(404, code 4040\)/);
  assert.equal(await host.getByText('Sending to the host…').count(), 0);
  // The lists are read again: the deleted configuration is offered no more, and the message stays.
  await picker.locator(`option[value="${id}"]`).waitFor({ state: 'detached' });
  assert.equal(await page.locator(`tr[data-config="${id}"]`).count(), 0);
  assert.match((await refused.textContent())!, /model configuration not found/);
  await page.unroute(applyCall);
  assert.equal((await api('GET', `/api/v1/hosts/${hostId}`)).body.data.modelConfig, null, 'the host stays at its default');
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('Failed to load resource')), []);
});

test('a configuration the host cannot write reads failed, with the host\'s reason', { skip }, async () => {
  const { page } = tab;
  // The host never overwrites a settings file it cannot read back (the user's other settings live there).
  writeFileSync(settingsFile, '{ not json');
  const host = page.locator(`tr[data-host="${hostId}"]`);
  await host.getByRole('button', { name: 'Apply' }).click();
  await host.locator('[data-sync]').filter({ hasText: 'failed' }).waitFor();
  await host.locator('.error').filter({ hasText: 'not valid JSON' }).waitFor();
  assert.equal(readFileSync(settingsFile, 'utf8'), '{ not json', 'left as it was');
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('Failed to load resource')), []);
});
