// The Account page's API keys in detail, in a real Chromium: the create form (a blank name waits, the
// name sent trimmed, everything held while the hub works, the form cleared once made, the name kept when
// the hub refused it at the account's cap), each row's facts (its preview, never used), another key
// refreshed with the console staying on its own, a key deleted
// elsewhere refused on Refresh and on Delete with the row gone after, and the key this console is signed
// in with: marked, refreshed with the console going on under the new key, deleted with a warning and the
// console signed out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { API_KEYS_PER_ACCOUNT } from '../src/account-caps.js';
import { closeConsoleTest, answerNextDialog, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

const keys = () => tab.page.locator('section[aria-labelledby="keys-h"]');
const rowOf = (name: string) => keys().getByRole('table', { name: 'API keys' }).getByRole('row').filter({ has: tab.page.getByRole('cell', { name, exact: false }) });
const status = async (key: string) => (await t.api('GET', '/api/v1/me', { token: key })).status;
const storedKey = () => tab.page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey'));

before(async () => {
  if (skip) return;
  t = await startTestHub();
  u = await t.user('key-keeper');
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
  await tab.page.getByRole('link', { name: 'Account' }).click();
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, {
    failedLoadsProvoked: true, // the refusals
    then: [() => t.close()],
  });
});

test('creating a key: a blank name waits, the name sent trimmed and everything held while the hub works, the form cleared once made', { skip }, async () => {
  const { page } = tab;
  const k = keys();
  const name = k.getByLabel('Name');
  const create = k.getByRole('button', { name: 'Create key' });
  await rowOf('default').waitFor();
  assert.equal(await create.isDisabled(), true, 'no name yet');
  await name.fill('   ');
  assert.equal(await create.isDisabled(), true, 'a blank name is no name');
  await name.fill('  laptop key  ');
  const release = await holdNext(page, (url, method) => method === 'POST' && url.pathname === '/api/v1/me/keys');
  await create.click();
  await page.waitForFunction(() => [...document.querySelectorAll('section[aria-labelledby="keys-h"] button')].every((b) => (b as HTMLButtonElement).disabled));
  await release();
  await k.getByRole('status').filter({ hasText: 'Your new key laptop key: copy it now, it is not shown again.' }).waitFor();
  const key = (await k.locator('[data-new-key]').textContent())!.trim();
  const row = rowOf('laptop key');
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.deepEqual(cells.slice(0, 3), ['laptop key', key.slice(0, 10) + '…', '—'], 'the name trimmed, the preview the key\'s first characters, never used');
  assert.equal(await name.inputValue(), '', 'the form is cleared once the key is made');
  assert.equal(await create.isDisabled(), true);
  assert.equal((await t.client(u.key).keys.list()).items.find((x) => x.name === 'laptop key')?.preview, key.slice(0, 10) + '…');
  await k.getByRole('button', { name: 'Done' }).click();
  await k.getByRole('status').waitFor({ state: 'detached' });

  // Another key refreshed: the console stays with its own.
  answerNextDialog(page, true);
  await row.getByRole('button', { name: 'Refresh' }).click();
  const renewed = (await k.locator('[data-new-key]').textContent())!.trim();
  await row.getByRole('cell', { name: renewed.slice(0, 10) + '…' }).waitFor();
  assert.deepEqual([await status(key), await status(renewed)], [401, 200]);
  assert.equal(await storedKey(), u.key, 'the console still signs with its own key');
  await k.getByRole('button', { name: 'Done' }).click();
  assert.deepEqual(tab.pageErrors, []);
});

test('at the account\'s cap the hub\'s refusal is shown and the name kept, to be sent again once there is room', { skip }, async () => {
  const c = t.client(u.key);
  const spare = [];
  for (let i = (await c.keys.list()).total; i < API_KEYS_PER_ACCOUNT; i++) spare.push(await c.keys.create(`spare ${i}`));
  const k = keys();
  await k.getByLabel('Name').fill('one too many');
  await k.getByRole('button', { name: 'Create key' }).click();
  await k.getByRole('alert').filter({ hasText: `an account holds at most ${API_KEYS_PER_ACCOUNT} API keys; delete one first (409, code 4090)` }).waitFor();
  assert.equal(await k.getByLabel('Name').inputValue(), 'one too many', 'the refused name stays in the form');
  assert.equal(await k.getByRole('status').count(), 0, 'no key shown');
  for (const s of spare) await c.keys.remove(s.id);
  await k.getByRole('button', { name: 'Create key' }).click();
  await k.getByRole('status').filter({ hasText: 'Your new key one too many' }).waitFor();
  assert.equal(await k.getByRole('alert').count(), 0, 'the refusal is gone once the key is made');
  assert.equal(await k.getByLabel('Name').inputValue(), '');
  await k.getByRole('button', { name: 'Done' }).click();
  await rowOf('spare 49').waitFor({ state: 'detached' }); // the list read again with the key made
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 409')), []);
  tab.pageErrors.length = 0;
});

test('a key deleted elsewhere: Refresh and Delete are refused with the hub\'s 404, and the row is gone after each', { skip }, async () => {
  const { page } = tab;
  const c = t.client(u.key);
  const a = await c.keys.create('gone before refresh');
  const b = await c.keys.create('gone before delete');
  await page.reload();
  await rowOf('gone before delete').waitFor();
  await c.keys.remove(a.id);
  const k = keys();

  let asked = answerNextDialog(page, true);
  await rowOf('gone before refresh').getByRole('button', { name: 'Refresh' }).click();
  assert.equal(asked(), 'Refresh “gone before refresh”? The old key stops working at once.');
  await k.getByRole('alert').filter({ hasText: 'key not found (404, code 4040)' }).waitFor();
  await rowOf('gone before refresh').waitFor({ state: 'detached' });
  assert.equal(await k.getByRole('status').count(), 0, 'no key shown');

  await c.keys.remove(b.id); // after the list was read again, which still shows it
  asked = answerNextDialog(page, true);
  await rowOf('gone before delete').getByRole('button', { name: 'Delete' }).click();
  assert.equal(asked(), 'Delete “gone before delete”?');
  await rowOf('gone before delete').waitFor({ state: 'detached' });
  await k.getByRole('alert').filter({ hasText: 'key not found (404, code 4040)' }).waitFor();
  assert.equal(await status(u.key), 200, "the console's own key untouched");
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 404')), []);
  tab.pageErrors.length = 0;
});

test('the key this console is signed in with: marked; refreshed, the console goes on with the new key; deleted, after a warning, the console is signed out', { skip }, async () => {
  const { page } = tab;
  await page.reload();
  const k = keys();
  const own = rowOf('default');
  await own.getByText('this console').waitFor();
  assert.equal(await k.getByText('this console').count(), 1, 'only its own key is marked');

  let asked = answerNextDialog(page, false);
  await own.getByRole('button', { name: 'Refresh' }).click();
  assert.equal(asked(), 'Refresh “default”? The old key stops working at once. This console is signed in with it and goes on with the new one.');
  assert.equal(await status(u.key), 200, 'a dismissed refresh leaves the key working');

  answerNextDialog(page, true);
  await own.getByRole('button', { name: 'Refresh' }).click();
  await k.getByRole('status').filter({ hasText: 'Your new key default' }).waitFor();
  const fresh = (await k.locator('[data-new-key]').textContent())!.trim();
  assert.deepEqual([await status(u.key), await status(fresh)], [401, 200]);
  assert.equal(await storedKey(), fresh, 'the console signs its calls with the new key');
  // The list read again under the new key, still marking it; the rest of the console works.
  await own.getByRole('cell', { name: fresh.slice(0, 10) + '…' }).waitFor();
  await own.getByText('this console').waitFor();
  assert.equal(await k.getByRole('alert').count(), 0);
  await k.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  await page.getByRole('link', { name: 'Account' }).click();

  asked = answerNextDialog(page, false);
  await rowOf('default').getByRole('button', { name: 'Delete' }).click();
  assert.equal(asked(), 'Delete “default”? This console is signed in with it: you will be signed out.');
  assert.equal(await status(fresh), 200, 'a dismissed delete leaves the key working');

  answerNextDialog(page, true);
  await rowOf('default').getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Account' }).count(), 0, 'signed out');
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal(await storedKey(), null, 'the deleted key forgotten');
  assert.equal(await status(fresh), 401);
  assert.deepEqual(tab.pageErrors, []);
});
