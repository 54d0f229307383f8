// Audit (forty-fifth session): /auth/callback showed the identity provider's `error_description` from the
// query string before it checked `state` against the flow this tab started. Anyone can therefore send a link to the
// hub's own origin that renders attacker-written text in the console's alert box (content spoofing /
// phishing on a trusted origin), e.g. "sign in again at <evil site> with your API key". An IdP's real
// error comes back with the `state` of a flow this tab started; an error without that state is not
// the IdP talking, and must not be shown verbatim.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import type { Request } from 'playwright-core';
import { closeConsoleTest, noBrowser, openConsole, type ConsoleTab } from './helpers/browser.js';

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

const LURE = 'Your Agent Hub account is locked. Unlock it at https://agent-hub-support.example/unlock with your API key.';

test('a crafted /auth/callback link (no flow started in this tab) does not render attacker text in the console', { skip }, async () => {
  const { page } = tab;
  const q = new URLSearchParams({ error: 'access_denied', error_description: LURE, state: 'attacker-chosen' });
  await page.goto(`${t.url}/auth/callback?${q}`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const shown = await alert.innerText();
  assert.ok(!shown.includes('agent-hub-support.example'),
    `the console's own alert box, on the hub's origin, shows text taken from the link: ${JSON.stringify(shown)}`);
  assert.match(shown, /not started in this browser tab/, 'an error without this tab\'s state is not the provider talking');
  // An error without any state: not the provider either.
  await page.goto(`${t.url}/auth/callback?${new URLSearchParams({ error: 'access_denied', error_description: LURE })}`);
  await page.getByRole('alert').filter({ hasText: 'not started in this browser tab' }).waitFor();
  assert.ok(!(await page.getByRole('alert').innerText()).includes('agent-hub-support.example'));
  // Without a state and without an error: only the address opened by hand.
  await page.goto(`${t.url}/auth/callback`);
  await page.getByRole('alert').filter({ hasText: 'it was opened without a code' }).waitFor();
});

test("the provider's refusal of this tab's own sign-in is reported in the console's words, its detail labelled and short", { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/signin`);
  await page.evaluate(() => sessionStorage.setItem('agent-hub.flowState', 'this-tabs-state'));
  const q = new URLSearchParams({ error: 'access_denied', error_description: 'User cancelled. ' + 'x'.repeat(500), state: 'this-tabs-state' });
  await page.goto(`${t.url}/auth/callback?${q}`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const shown = await alert.innerText();
  assert.match(shown, /did not sign you in: the sign-in was declined/);
  assert.match(shown, /the provider's detail: User cancelled\./);
  assert.ok(!shown.includes('x'.repeat(201)), 'the detail is cut short');
  await page.getByRole('link', { name: 'Try again' }).waitFor(); // back to the sign-in page
  assert.equal(await page.getByRole('link', { name: 'Try again' }).getAttribute('href'), '/signin');
});

test("this tab's own state with neither a code nor an error: said, and nothing sent to the hub", { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/signin`);
  await page.evaluate(() => sessionStorage.setItem('agent-hub.flowState', 'this-tabs-state-2'));
  const sent: string[] = [];
  const seen = (r: Request) => { if (new URL(r.url()).pathname.startsWith('/api/v1/auth/')) sent.push(r.url()); };
  page.on('request', seen);
  await page.goto(`${t.url}/auth/callback?state=this-tabs-state-2`);
  await page.getByRole('alert').filter({ hasText: 'it was opened without a code' }).waitFor();
  page.off('request', seen);
  assert.deepEqual(sent, []);
});
