// A console address whose id is not valid percent-encoding (`/market/%E0%A4%A`, `/invites/%`) threw in
// the page router (decodeURIComponent) and left a blank console; a link anyone can send. It is now the
// console's "Not found" page, with the way back to the market.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { closeConsoleTest, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
before(async () => {
  if (skip) return;
  t = await startTestHub();
  tab = await openConsole(t.url);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

async function showsNotFound(path: string) {
  await tab.page.goto(t.url + path);
  await tab.page.getByRole('heading', { name: 'Not found' }).waitFor();
  assert.ok(await tab.page.getByRole('link', { name: 'Go to the market' }).isVisible(), path);
}

test('an address with broken percent-encoding shows Not found, not a blank page', { skip }, async () => {
  for (const path of ['/market/%E0%A4%A', '/invites/%']) await showsNotFound(path);
  // Pages for the signed-in: the sign-in comes first, then the same.
  await signInAs(tab.page, t.url, (await t.user()).key);
  for (const path of ['/sessions/%zz', '/agents/%']) await showsNotFound(path);
});
