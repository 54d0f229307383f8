// The agent form field by field, in a real Chromium against a real hub, a fake host on the real channel
// and a local model endpoint: each field reaches the hub as typed (the name, display name, category and
// work directory without the spaces around them; the guest ceiling as picked), an edit opens on every
// saved value (so saving it changes nothing unseen: a ceiling shown lower or higher than saved would be
// written back), Suggest (the text sent trimmed, the model's fields and where they came from, the
// keywords' fallback and why, held while it works), what the form refuses before sending (tags: the
// count, the one too long, marked and every save held), Saving… and Loading hosts…, and the directory
// browser from a nested directory typed with spaces.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { CLAUDE_ENGINE, connectFakeHost, eventually, pairHost, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let host: FakeHost;
let model: Server;
let modelReply = '';
const tree: Record<string, string[]> = { '': ['projects'], projects: ['reviewer'], 'projects/reviewer': ['src'] };

before(async () => {
  if (skip) return;
  model = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ type: 'message', content: [{ type: 'text', text: modelReply }] }));
    });
  });
  await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
  t = await startTestHub({ modelTestAllowPrivate: true, rateLimitAiFillPerMinute: 0 });
  owner = await t.user('fields-owner');
  await t.client(owner.key).modelConfigs.create({
    name: 'drafter', apiType: 'anthropic', baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}`, apiKey: 'sk-fields-0001', modelName: 'm-1',
  });
  const { hostId, credential } = await pairHost(t, owner.key, 'fields-box');
  host = await connectFakeHost(t, credential, {
    name: 'fields-box',
    answer: (f) => {
      if (f.t === 'engines.refresh') return { t: 'reply', id: f.id, ok: true, data: { engines: [CLAUDE_ENGINE] } };
      if (f.t !== 'dirs.list') return undefined;
      const entries = (tree[f.path] ?? []).map((name) => ({ name, path: f.path ? `${f.path}/${name}` : name }));
      return { t: 'reply', id: f.id, ok: true, data: { path: f.path, entries } };
    },
  });
  await eventually(async () => (await t.client(owner.key).agents.availableHosts()).some((h) => h.id === hostId && h.engines.length === 1));
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, owner.key);
});

after(async () => {
  if (skip) return;
  host.close();
  model.close();
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

const manage = async (id: string) => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}/manage`, { token: owner.key })).body.data;
const newForm = async () => {
  await tab.page.goto(`${t.url}/agents/new`);
  const form = tab.page.getByRole('form', { name: 'New agent' });
  await form.getByLabel('Host', { exact: true }).getByRole('option', { name: 'fields-box (online)' }).waitFor({ state: 'attached' });
  return form;
};
const agentsCall = (path: string, method = 'POST') => (u: URL, m: string) => u.pathname === `/api/v1/agents${path}` && m === method;

test('each field reaches the hub as typed, the spaces around a name, category or directory left out; an edit opens on every saved value, the guest ceiling among them', { skip }, async () => {
  const { page } = tab;
  const form = await newForm();
  await form.getByLabel('Display name').fill('  Spaced Bot  ');
  await form.getByLabel('Name', { exact: true }).fill('  spaced-bot  ');
  await form.getByLabel('Description').fill('Reads diffs');
  await form.getByLabel('Tags').fill('review, diffs');
  await form.getByLabel('Category').fill('  coding  ');
  await form.getByLabel('Others may use modes up to').selectOption('plan');
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'fields-box (online)' });
  await form.getByLabel('Work directory').fill('  projects/reviewer  ');
  await form.getByLabel('Expected input').fill('a unified diff');
  await form.getByLabel('Expected output').fill('review notes');
  await form.getByRole('button', { name: 'Create', exact: true }).click();
  const id = 'fields-owner/spaced-bot';
  await page.waitForURL(`${t.url}/agents/${encodeURIComponent(id)}`);
  const a = await manage(id);
  assert.deepEqual(
    [a.name, a.displayName, a.description, a.tags, a.category, a.maxGuestMode, a.workDir, a.expectedInput, a.expectedOutput, a.engine],
    ['spaced-bot', 'Spaced Bot', 'Reads diffs', ['review', 'diffs'], 'coding', 'plan', 'projects/reviewer', 'a unified diff', 'review notes', 'claude-code'],
  );

  const edit = page.getByRole('form', { name: 'Edit agent' });
  await edit.getByLabel('Name', { exact: true }).waitFor();
  const values = async () => Promise.all(['Display name', 'Category', 'Work directory', 'Expected input', 'Expected output', 'Others may use modes up to'].map((l) => edit.getByLabel(l, { exact: true }).inputValue()));
  assert.deepEqual(await values(), ['Spaced Bot', 'coding', 'projects/reviewer', 'a unified diff', 'review notes', 'plan']);
  await edit.getByTestId('guest-mode-note').getByText('others may read and plan; nothing is changed').waitFor();

  // An edit of the ceiling alone is sent.
  await edit.getByLabel('Others may use modes up to').selectOption('accept-edits');
  await edit.getByRole('button', { name: 'Save', exact: true }).click();
  await eventually(async () => (await manage(id)).maxGuestMode === 'accept-edits');
  assert.equal((await manage(id)).workDir, 'projects/reviewer');
});

test('Suggest: the text sent without its spaces and held while the model works; the model’s fields, said to be the model’s; without a usable answer the keywords’, and why', { skip }, async () => {
  const { page } = tab;
  const form = await newForm();
  modelReply = 'Here:\n' + JSON.stringify({ displayName: 'SQL Tutor', name: 'sql-tutor', desc: 'Explains SQL queries step by step.', tags: ['sql', 'teaching'], cat: 'education' });
  await form.getByLabel('What should the agent do?').fill('  An agent that teaches SQL to beginners.  ');
  const release = await holdNext(page, agentsCall('/ai-fill'));
  const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/agents/ai-fill'));
  await form.getByRole('button', { name: 'Suggest' }).click();
  assert.deepEqual((await sent).postDataJSON(), { text: 'An agent that teaches SQL to beginners.' });
  const busy = form.getByRole('button', { name: 'Suggesting…' });
  await busy.waitFor();
  assert.ok(await busy.isDisabled(), 'held while the model works');
  await release();
  await form.getByRole('status').getByText('Suggested by your model configuration: check it before saving.').waitFor();
  const fields = async () => Promise.all(['Display name', 'Name', 'Description', 'Tags', 'Category'].map((l) => form.getByLabel(l, { exact: true }).inputValue()));
  assert.deepEqual(await fields(), ['SQL Tutor', 'sql-tutor', 'Explains SQL queries step by step.', 'sql, teaching', 'education']);

  modelReply = 'I would rather not.';
  await form.getByLabel('What should the agent do?').fill('Deploys the blog to the server.');
  await form.getByRole('button', { name: 'Suggest' }).click();
  await form.getByRole('status').getByText('Suggested from keywords (no model answered: bad_response): check it before saving.').waitFor();
  const rules = (await t.client(owner.key).agents.aiFill({ text: 'Deploys the blog to the server.' }));
  assert.equal(rules.source, 'rules');
  assert.deepEqual(await fields(), [rules.displayName, rules.name, rules.desc, rules.tags.join(', '), rules.cat]);
});

test('tags the hub would refuse: the count and the one too long said and marked, every save held until mended; no engine to pick without a host', { skip }, async () => {
  const form = await newForm();
  await form.getByLabel('Name', { exact: true }).fill('tagged');
  await form.getByLabel('Scope').selectOption('public');
  const saves = ['Create', 'Create and submit for review', 'Save as draft'].map((name) => form.getByRole('button', { name, exact: true }));
  const held = async () => Promise.all(saves.map((b) => b.isDisabled()));
  assert.deepEqual(await held(), [false, false, false]);
  const tags = form.getByLabel('Tags');
  const note = form.locator('small', { hasText: 'tags · each 1–30 characters' });

  await tags.fill(Array.from({ length: 20 }, (_, i) => `t${i}`).join(', '));
  await note.getByText('20/20 tags · each 1–30 characters', { exact: true }).waitFor();
  assert.deepEqual(await held(), [false, false, false], 'twenty tags are allowed');
  await tags.fill(Array.from({ length: 21 }, (_, i) => `t${i}`).join(', '));
  await note.getByText('21/20 tags · each 1–30 characters · at most 20 tags (now 21)').waitFor();
  assert.equal(await note.locator('span').getAttribute('class'), 'bad');
  assert.equal(await tags.getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await held(), [true, true, true]);

  await tags.fill(`fine, ${'x'.repeat(31)}`);
  await note.getByText(`2/20 tags · each 1–30 characters · “${'x'.repeat(31)}…” is longer than 30 characters`).waitFor();
  assert.deepEqual(await held(), [true, true, true]);

  await tags.fill(`fine, ${'x'.repeat(30)}`);
  await note.getByText('2/20 tags · each 1–30 characters', { exact: true }).waitFor();
  assert.deepEqual(await held(), [false, false, false], 'a tag of thirty characters is allowed');

  await tags.fill('fine, also-fine');
  await note.getByText('2/20 tags · each 1–30 characters', { exact: true }).waitFor();
  assert.equal(await note.locator('span').getAttribute('class'), '');
  assert.equal(await tags.getAttribute('aria-invalid'), null);
  assert.deepEqual(await held(), [false, false, false]);

  assert.ok(await form.getByLabel('Engine').isDisabled(), 'no host picked: no engine');
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'fields-box (online)' });
  assert.ok(!(await form.getByLabel('Engine').isDisabled()));
  await form.getByLabel('Host', { exact: true }).selectOption({ label: '— none —' });
  assert.ok(await form.getByLabel('Engine').isDisabled());
});

test('Loading hosts… and Saving… while the hub works, every save held; an edit of a public agent offers Save and submit for review', { skip }, async () => {
  const { page } = tab;
  const form = await newForm();
  let release = await holdNext(page, agentsCall('/available-hosts', 'GET'));
  await form.getByRole('button', { name: 'Reload hosts' }).click();
  const loading = form.getByRole('button', { name: 'Loading hosts…' });
  await loading.waitFor();
  assert.ok(await loading.isDisabled());
  await release();
  await form.getByRole('button', { name: 'Reload hosts' }).waitFor();

  await form.getByLabel('Name', { exact: true }).fill('public-one');
  await form.getByLabel('Scope').selectOption('public');
  release = await holdNext(page, agentsCall(''));
  await form.getByRole('button', { name: 'Save as draft' }).click();
  const saving = form.getByRole('button', { name: 'Saving…' });
  await saving.waitFor();
  assert.deepEqual(await Promise.all([saving, form.getByRole('button', { name: 'Create and submit for review' }), form.getByRole('button', { name: 'Save as draft' })].map((b) => b.isDisabled())), [true, true, true]);
  await release();
  await page.waitForURL(`${t.url}/agents/${encodeURIComponent('fields-owner/public-one')}`);
  const edit = page.getByRole('form', { name: 'Edit agent' });
  await edit.getByRole('button', { name: 'Save and submit for review' }).waitFor();
  assert.equal(await edit.getByRole('button', { name: 'Create and submit for review' }).count(), 0);
});

test('the directory browser opens at a nested directory typed with spaces, goes up one level at a time, and Hide browser closes it', { skip }, async () => {
  const form = await newForm();
  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'fields-box (online)' });
  await form.getByLabel('Work directory').fill('  projects/reviewer  ');
  await form.getByRole('button', { name: 'Browse…' }).click();
  const dirs = form.getByRole('region', { name: 'Work directory browser' });
  await dirs.getByText('Work root / projects/reviewer').waitFor();
  await dirs.getByRole('button', { name: 'Use src' }).waitFor();
  await dirs.getByRole('button', { name: '↑ Up' }).click();
  await dirs.getByText('Work root / projects', { exact: true }).waitFor();
  await dirs.getByRole('button', { name: 'Open reviewer' }).click();
  await dirs.getByText('Work root / projects/reviewer', { exact: true }).waitFor();
  await form.getByRole('button', { name: 'Hide browser' }).click();
  await dirs.waitFor({ state: 'detached' });
  await form.getByRole('button', { name: 'Browse…' }).waitFor();
  assert.equal(await form.getByLabel('Work directory').inputValue(), '  projects/reviewer  ', 'hiding picks nothing');
});

test('each field says its limit under it, as its description, marked when broken: used/max, the rule, the hint, the problem; the input held to its maximum', { skip }, async () => {
  const form = await newForm();
  const input = (label: string) => form.getByLabel(label, { exact: true });
  // What a screen reader reads with the field, and whether it is marked.
  const described = (label: string) => input(label).evaluate((el) => {
    const d = document.getElementById(el.getAttribute('aria-describedby') ?? '');
    return d && { class: d.className, text: d.textContent, invalid: el.getAttribute('aria-invalid') };
  });
  const saves = () => Promise.all(['Create', 'Save as draft'].map((name) => form.getByRole('button', { name, exact: true }).isDisabled()));

  assert.deepEqual(await described('Name'), { class: 'limit bad', text: '0/80 · 1–80 characters', invalid: 'true' });
  assert.equal(await input('Name').getAttribute('required'), '');
  assert.equal(await input('Name').getAttribute('maxlength'), '80');
  assert.deepEqual(await described('Display name'), { class: 'limit', text: '0/80 · up to 80 characters · defaults to the name', invalid: null });
  assert.equal(await input('Display name').getAttribute('required'), null);
  assert.deepEqual(await described('Description'), { class: 'limit', text: '0/1000 · up to 1000 characters', invalid: null });
  assert.equal(await input('Description').getAttribute('maxlength'), '1000');
  assert.deepEqual(await described('Category'), { class: 'limit', text: '0/50 · up to 50 characters · empty means “other”', invalid: null });

  await input('Name').fill('limits');
  assert.deepEqual(await described('Name'), { class: 'limit', text: '6/80 · 1–80 characters', invalid: null });
  assert.deepEqual(await saves(), [false, false]);

  await form.getByLabel('Host', { exact: true }).selectOption({ label: 'fields-box (online)' });
  const hint = "relative to the host's work root; empty = the root";
  await input('Work directory').fill('/etc');
  assert.deepEqual(await described('Work directory'), { class: 'limit bad', text: `4/500 · up to 500 characters · ${hint} · must be a relative path`, invalid: 'true' });
  await form.getByText('must be a relative path').and(form.locator('strong')).waitFor();
  assert.deepEqual(await saves(), [true, true], 'a directory the hub would refuse holds every save');
  await input('Work directory').fill('projects/../..');
  assert.deepEqual(await described('Work directory'), { class: 'limit bad', text: `14/500 · up to 500 characters · ${hint} · must not contain “..”`, invalid: 'true' });
  await input('Work directory').fill('projects');
  assert.deepEqual(await described('Work directory'), { class: 'limit', text: `8/500 · up to 500 characters · ${hint}`, invalid: null });
  assert.deepEqual(await saves(), [false, false]);
});
