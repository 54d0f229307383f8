// The Models page's form and rows in detail, in a real Chromium against a local model endpoint: what the
// form sends (the name trimmed, the auth mode chosen, a model name with a space stopped by the browser),
// what it says while the hub works ("Saving…", "Testing…", each button held) and what the hub refused
// (the save's and the test's own messages), the test result's figures and the endpoint's own error, a
// second test clearing the first result, the edit form (its title, no "detect" once a mode is stored),
// each row's facts (base URL, auth mode, when updated), a bound configuration's delete refused in its
// row, and a list the page could not load.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { connectFakeHost, pairHost, type FakeHost } from './helpers/host.js';
import { startMessagesEndpoint, type MessagesEndpoint } from './helpers/model-endpoint.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const KEY = 'sk-form-KEY-0123456789abcdef';
const WRONG_KEY = 'sk-form-old-0123456789abcdef';

let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };
let endpoint: MessagesEndpoint;
let endpointUrl: string;
let host: FakeHost | undefined;

const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: u.key, body });
const stored = async (name: string) => (await api('GET', '/api/v1/model-configs')).body.data.items.find((c: { name: string }) => c.name === name);

before(async () => {
  if (skip) return;
  endpoint = await startMessagesEndpoint(KEY); // x-api-key only, refusing in its own words
  endpointUrl = endpoint.url;
  t = await startTestHub({ rateLimitModelTestPerMinute: 0 } as any, { MODEL_TEST_ALLOW_PRIVATE: '1' });
  u = await t.user('form-filler');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
});

after(async () => {
  if (skip) return;
  host?.close();
  await closeConsoleTest(tab, {
    failedLoadsProvoked: true, // refusals and a list that could not load
    then: [() => t.close(), () => endpoint.close()],
  });
});

test('the new form: a test refused, a model name with a space stopped, a save refused, then saved trimmed with its auth mode while "Saving…"', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('link', { name: 'Models' }).click();
  await page.getByText('No model configurations yet.').waitFor();
  await page.getByRole('button', { name: 'New configuration' }).click();
  const form = page.getByRole('form', { name: 'New model configuration' });
  await form.getByRole('heading', { name: 'New model configuration' }).waitFor();
  assert.deepEqual(await form.getByLabel('Auth mode').locator('option').allInnerTexts(), ['detect (bearer first)', 'bearer', 'x-api-key']);

  // The test is the hub's to refuse: without a model name there is nothing to ask the endpoint.
  await form.getByLabel('Base URL').fill(endpointUrl);
  await form.getByLabel('API key').fill(WRONG_KEY);
  await form.getByRole('button', { name: 'Test connection' }).click();
  assert.match((await form.getByRole('alert').textContent())!, /missing field "modelName".* \(400, code 4000\)/);

  // A model name with a space never leaves the browser.
  await form.getByLabel('Name', { exact: true }).fill('  Spaced name  ');
  await form.getByLabel('Model name').fill('model one');
  let posted = 0;
  const countCreate = (r: { method(): string; url(): string }) => { if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/model-configs') posted++; };
  page.on('request', countCreate);
  await form.getByRole('button', { name: 'Create' }).click();
  assert.ok(await form.getByLabel('Model name').evaluate((el) => (el as HTMLInputElement).validity.patternMismatch));
  // The save is the hub's to refuse too, and its message replaces the test's.
  await form.getByLabel('Model name').fill('model-one');
  await form.getByLabel('Base URL').fill('ftp://other.example');
  await form.getByRole('button', { name: 'Create' }).click();
  await form.getByRole('alert').filter({ hasText: /must use http or https \(400, code \d+\)/ }).waitFor();
  assert.equal(posted, 1, 'only the save with a valid model name was sent');
  page.off('request', countCreate);
  assert.equal(await stored('Spaced name'), undefined);

  // Saved: "Saving…" while the hub is asked, the name trimmed, the chosen auth mode kept, the form closed.
  await form.getByLabel('Base URL').fill(endpointUrl);
  await form.getByLabel('Auth mode').selectOption('bearer');
  const release = await holdNext(page, (url, method) => method === 'POST' && url.pathname === '/api/v1/model-configs');
  await form.getByRole('button', { name: 'Create' }).click();
  const saving = form.getByRole('button', { name: 'Saving…' });
  await saving.waitFor();
  assert.ok(await saving.isDisabled(), 'one save at a time');
  await release();
  await form.waitFor({ state: 'detached' });
  const made = await stored('Spaced name');
  assert.ok(made, 'stored under the trimmed name');
  assert.equal(made.authMode, 'bearer');
  assert.equal(made.modelName, 'model-one');
  const row = page.locator(`tr[data-config="${made.id}"]`);
  await row.getByText('Spaced name', { exact: true }).waitFor();
  assert.equal(await row.locator('td').nth(1).textContent(), endpointUrl);
  assert.match((await row.locator('td').nth(2).textContent())!, /bearer$/);
  const updated = await page.evaluate((at) => new Date(at).toLocaleString(), made.updatedAt);
  assert.equal(await row.locator('td').nth(4).textContent(), updated);
});

test('a row\'s test of a key the endpoint refuses: "Testing…" while held, the failure with its reason, figure and the endpoint\'s own words; a second test clears the first', { skip }, async () => {
  const { page } = tab;
  const made = await stored('Spaced name');
  const row = page.locator(`tr[data-config="${made.id}"]`);
  const testCall = (url: URL, method: string) => method === 'POST' && url.pathname === '/api/v1/model-configs/test';
  let release = await holdNext(page, testCall);
  await row.getByRole('button', { name: 'Test' }).click();
  await row.getByRole('status').filter({ hasText: 'Testing…' }).waitFor();
  assert.ok(await row.getByRole('button', { name: 'Test' }).isDisabled());
  assert.ok(await row.getByRole('button', { name: 'Delete' }).isDisabled());
  await release();
  const failed = row.getByRole('alert').filter({ hasText: 'failed' });
  await failed.waitFor();
  assert.match((await failed.textContent())!, /failed · reason auth: the endpoint refused the key · \d+ ms/);
  assert.match((await failed.locator('.error').textContent())!, /this endpoint wants x-api-key/);
  release = await holdNext(page, testCall);
  await row.getByRole('button', { name: 'Test' }).click();
  await row.getByRole('status').filter({ hasText: 'Testing…' }).waitFor();
  assert.equal(await failed.count(), 0, 'the earlier result is gone while the new test runs');
  await release();
  await failed.waitFor();
});

test('the edit form: its title, no "detect" once a mode is stored, a new key tested ("Testing: …" while held) and passing with its figure, a second test clearing the first, saved (the row\'s old result gone)', { skip }, async () => {
  const { page } = tab;
  const made = await stored('Spaced name');
  const row = page.locator(`tr[data-config="${made.id}"]`);
  await row.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit Spaced name' });
  await form.getByRole('heading', { name: 'Edit “Spaced name”' }).waitFor();
  assert.deepEqual(await form.getByLabel('Auth mode').locator('option').allInnerTexts(), ['bearer', 'x-api-key']);
  assert.equal(await form.getByLabel('Auth mode').inputValue(), 'bearer');
  // The right key, and the mode the endpoint wants.
  await form.getByLabel('API key').fill(KEY);
  await form.getByLabel('Auth mode').selectOption('x-api-key');
  const testCall = (url: URL, method: string) => method === 'POST' && url.pathname === '/api/v1/model-configs/test';
  let release = await holdNext(page, testCall);
  await form.getByRole('button', { name: 'Test connection' }).click();
  await form.getByRole('status').filter({ hasText: 'Testing: a real message is sent to the endpoint' }).waitFor();
  assert.ok(await form.getByRole('button', { name: 'Test connection' }).isDisabled());
  await release();
  const passed = form.getByRole('status').filter({ hasText: 'passed' });
  await passed.waitFor();
  assert.match((await passed.textContent())!, /passed in \d+ ms · auth mode x-api-key/);
  release = await holdNext(page, testCall);
  await form.getByRole('button', { name: 'Test connection' }).click();
  await form.getByRole('status').filter({ hasText: 'Testing:' }).waitFor();
  assert.equal(await passed.count(), 0, 'the earlier result is gone while the new test runs');
  await release();
  await passed.waitFor();
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  await row.locator('td').nth(2).filter({ hasText: /x-api-key$/ }).waitFor();
  assert.equal((await stored('Spaced name')).authMode, 'x-api-key');
  // The row's failed test was about the old key: it goes with the edit.
  assert.equal(await row.getByRole('alert').count(), 0);
});

test('deleting a configuration a host uses is refused in its row; a list the page cannot load is said', { skip }, async () => {
  const { page } = tab;
  const made = await stored('Spaced name');
  const { credential } = await pairHost(t, u.key, 'user-box');
  host = await connectFakeHost(t, credential, { name: 'user-box' });
  const bound = await api('POST', `/api/v1/hosts/${host.hostId}/model-config`, { configId: made.id });
  assert.ok(bound.status < 300, bound.text);
  const row = page.locator(`tr[data-config="${made.id}"]`);
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Delete' }).click();
  assert.match((await row.getByRole('alert').textContent())!, /configuration is bound to 1 host\(s\); revert them first \(409, code \d+\)/);
  assert.ok(await stored('Spaced name'), 'still there');

  const list = (url: URL) => url.pathname === '/api/v1/model-configs';
  await page.route(list, (route) => (route.request().method() === 'GET' ? route.abort('failed') : route.fallback()));
  await page.reload();
  await page.getByRole('heading', { name: 'Model configurations' }).waitFor();
  await page.getByRole('alert').filter({ hasText: 'Failed to fetch' }).waitFor();
  assert.equal(await page.locator('tr[data-config]').count(), 0);
  await page.unroute(list);
});
