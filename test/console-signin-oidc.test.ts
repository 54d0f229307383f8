// The console's OIDC sign-in: the hub says which provider it has
// (GET /api/v1/auth/providers); in Chromium the sign-in page offers "Sign in
// with <provider>", the provider (test/helpers/fake-oidc.ts) sends the browser
// back to the console's /auth/callback (the OIDC_REDIRECT_URI), and the
// console is signed in. Access tokens live 2 s here: later calls renew the
// login with its refresh token. Signing out ends the login on the hub.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { startCutProxy, type CutProxy } from './helpers/cut-proxy.js';
import { eventually } from './helpers/host.js';
import { answerNextDialog, noBrowser, openConsole, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let plain: TestHub;
let idp: FakeOidc;
let proxy: CutProxy;

before(async () => {
  // The console's address is the redirect target, so it must be known before the hub starts: a proxy in front of it.
  proxy = await startCutProxy(() => t.hub.port);
  idp = await startFakeOidc({ redirectUri: `${proxy.url}/auth/callback` });
  t = await startTestHub({ jwtTtlSeconds: 2 }, { ...idp.env, OIDC_PROVIDER_NAME: 'Example ID' });
  plain = await startTestHub();
});
after(async () => {
  await t.close();
  await plain.close();
  await idp.close();
  await proxy.close();
});

test('GET /api/v1/auth/providers: the configured provider with its name, none without OIDC', async () => {
  const r = await t.api('GET', '/api/v1/auth/providers');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.data, { items: [{ id: 'oidc', name: 'Example ID' }] });
  assert.doesNotMatch(r.text, /secret|idp-secret/i);
  const none = await plain.api('GET', '/api/v1/auth/providers');
  assert.deepEqual(none.body.data, { items: [] });
  // Without OIDC_PROVIDER_NAME the button names the issuer's host.
  const h = await startTestHub({}, idp.env);
  try {
    assert.deepEqual((await h.api('GET', '/api/v1/auth/providers')).body.data.items, [{ id: 'oidc', name: new URL(idp.url).host }]);
  } finally {
    await h.close();
  }
});

test('a hub without OIDC offers only the API key', { skip }, async () => {
  const tab = await openConsole(plain.url, '/signin');
  try {
    await tab.page.getByLabel('API key').waitFor();
    await tab.page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    assert.equal(await tab.page.getByRole('button', { name: /Sign in with/ }).count(), 0);
    assert.equal(await tab.page.getByText('or with an API key:').count(), 0, 'no "or" without a provider');
  } finally {
    await tab.close();
  }
});

test('Sign in with the provider: back at /auth/callback, signed in; the login renews itself; sign out ends it', { skip }, async () => {
  idp.browserUser = { sub: 'grace-1', name: 'Grace Hopper', email: 'grace@example.org' };
  const tab: ConsoleTab = await openConsole(proxy.url, '/signin');
  const { page } = tab;
  try {
    const button = page.getByRole('button', { name: 'Sign in with Example ID' });
    await button.waitFor();
    await shot(page, 'signin-oidc');
    await button.click();
    await page.waitForURL(/\/sessions$/);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    const stored = await page.evaluate(() => ({ at: sessionStorage.getItem('agent-hub.apiKey'), rt: sessionStorage.getItem('agent-hub.refreshToken') }));
    assert.ok(stored.at && stored.rt);
    const me = await t.api('GET', '/api/v1/me', { token: stored.at });
    assert.equal(me.body.data.name, 'Grace Hopper');
    assert.equal(idp.tokenRequests.at(-1)?.redirect_uri, `${proxy.url}/auth/callback`);
    // The callback address is not left in the history with its spent code.
    assert.doesNotMatch(page.url(), /code=/);

    // The access token expires (2 s): the next page's calls renew the login and go on.
    await eventually(async () => (await t.api('GET', '/api/v1/me', { token: stored.at! })).status === 401, 15_000, 250);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Market', exact: true }).click();
    await nav.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByText('No sessions yet').waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    const renewed = await page.evaluate(() => ({ at: sessionStorage.getItem('agent-hub.apiKey'), rt: sessionStorage.getItem('agent-hub.refreshToken') }));
    assert.notEqual(renewed.rt, stored.rt, 'the refresh token rotated');
    assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: stored.rt } })).status, 401, 'the old refresh token is spent');
    // An account made by the provider's sign-in has no API key yet: the Account page says so.
    await nav.getByRole('link', { name: 'Account', exact: true }).click();
    await page.locator('section[aria-labelledby="keys-h"]').getByText('No API keys.').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    const refreshAfter = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: renewed.rt } });
    assert.equal(refreshAfter.status, 401, 'signing out ended the login on the hub');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  } finally {
    await tab.close();
  }
});

test('a sign-in with the provider from a tab holding a dead key, asked for by a private page: signed in, back on that page', { skip }, async () => {
  idp.browserUser = { sub: 'lin-1', name: 'Lin Yutang' };
  const tab: ConsoleTab = await openConsole(proxy.url, '/signin');
  const { page } = tab;
  try {
    // A key deleted elsewhere, still in this tab: the provider's sign-in must not carry it.
    await page.evaluate(() => sessionStorage.setItem('agent-hub.apiKey', 'ahk_' + 'd'.repeat(40)));
    await page.goto(proxy.url + '/signin?from=%2Fhosts');
    await page.getByRole('button', { name: 'Sign in with Example ID' }).click();
    await page.waitForURL(/\/hosts$/);
    await page.getByRole('heading', { name: 'Hosts' }).waitFor();
    const at = await page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey'));
    assert.equal((await t.api('GET', '/api/v1/me', { token: at! })).body.data.name, 'Lin Yutang');
  } finally {
    await tab.close();
  }
});

test('a callback address this tab did not start (someone else\'s code and state) is not used: no sign-in, the attempt left unspent', { skip }, async () => {
  // Login CSRF: an attacker starts a sign-in, signs in at the provider as themselves and sends the
  // victim the callback address; followed, it would sign the victim's tab in to the attacker's account.
  const attempt = await t.client().auth.login();
  const code = idp.authorize(attempt.url, { sub: 'mallory-1', name: 'Mallory' });
  const tab = await openConsole(proxy.url, `/auth/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(attempt.state)}`);
  try {
    await tab.page.getByRole('alert').filter({ hasText: 'not started in this browser tab' }).waitFor();
    assert.equal(await tab.page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey')), null);
    // The hub never saw it: the attacker's attempt is still there to be spent (here, by the test).
    assert.equal((await t.client().auth.callback(code, attempt.state)).user.name, 'Mallory');
  } finally {
    await tab.close();
  }
});

test('Account → Bindings: a user signed in with an API key links the provider identity, keeps its session, then unlinks it; an unlink after another tab\'s is refused and the row goes', { skip }, async () => {
  const u = await t.user('linker');
  const other = await t.user('other');
  const tab = await openConsole(proxy.url);
  const { page } = tab;
  try {
    // With the key (signInAs would find two "Sign in" buttons here: this hub also offers the provider).
    await page.goto(proxy.url + '/signin');
    await page.getByLabel('API key').fill(u.key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // An identity already linked to another account: a readable 409, nothing linked.
    const taken = { sub: 'taken-1', name: 'Taken' };
    idp.browserUser = taken;
    const start = await t.client(other.key).auth.linkIdentity('oidc');
    const code = idp.authorize(start.url, taken);
    await t.client(other.key).auth.callback(code, start.state);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Account', exact: true }).click();
    const card = page.locator('section[aria-labelledby="bindings-h"]');
    await card.getByRole('button', { name: 'Link Example ID' }).click();
    await page.getByRole('heading', { name: 'Linking your identity…' }).waitFor();
    assert.match(await page.getByRole('alert').innerText(), /this external identity is linked to another account \(409, code 4090\)/);
    await page.getByRole('link', { name: 'Back to the account' }).click();
    await card.getByText('No linked identity.').waitFor();

    idp.browserUser = { sub: 'ada-1', name: 'Ada Lovelace', email: 'ada@example.org' };
    await card.getByRole('button', { name: 'Link Example ID' }).click();
    await page.waitForURL(/\/account\?linked=oidc$/);
    await card.getByRole('status').filter({ hasText: 'Linked Example ID.' }).waitFor();
    await card.locator('[data-identity="oidc"]').getByText('Example ID (Ada Lovelace,').waitFor();
    assert.equal(await card.getByRole('button', { name: 'Link Example ID' }).count(), 0);
    const ids = (await t.client(u.key).bindings.get()).identities;
    assert.deepEqual(ids.map((i) => [i.provider, i.displayName]), [['oidc', 'Ada Lovelace']]);
    // The console kept the API key it was signed in with, and the login the hub issued with the link is ended.
    assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-hub.apiKey')), u.key);
    await eventually(async () => (await t.hub.ctx.em().execute(`select count(*)::int as n from auth_sessions where user_id = ? and revoked_at is null`, [u.id]))[0].n === 0, 5000, 50);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-hub.refreshToken')), null);
    assert.doesNotMatch(page.url(), /code=/);
    await shot(page, 'account-identity-linked');

    const asked = answerNextDialog(page, false);
    await card.getByRole('button', { name: 'Unlink' }).click();
    assert.equal(asked(), 'Unlink your Example ID identity “Ada Lovelace”?');
    assert.equal((await t.client(u.key).bindings.get()).identities.length, 1, 'a dismissed unlink leaves it linked');
    page.once('dialog', (d) => void d.accept());
    await card.getByRole('button', { name: 'Unlink' }).click();
    await card.getByText('No linked identity.').waitFor();
    await card.getByRole('button', { name: 'Link Example ID' }).waitFor();
    assert.deepEqual((await t.client(u.key).bindings.get()).identities, []);
    assert.equal(await card.getByRole('status').filter({ hasText: 'Linked' }).count(), 0, 'the address still says linked=oidc, the list does not');

    // Linked again, then unlinked in another tab: this tab's Unlink is refused in the hub's words and the row goes.
    await card.getByRole('button', { name: 'Link Example ID' }).click();
    await card.locator('[data-identity="oidc"]').waitFor();
    await t.client(u.key).auth.unlinkIdentity('oidc');
    page.once('dialog', (d) => void d.accept());
    await card.getByRole('button', { name: 'Unlink' }).click();
    await card.getByRole('alert').filter({ hasText: 'no oidc identity linked (404, code 4040)' }).waitFor();
    await card.getByText('No linked identity.').waitFor();
    await card.getByRole('button', { name: 'Link Example ID' }).waitFor();
    assert.deepEqual(tab.pageErrors.filter((e) => !/409|404/.test(e)), []);
  } finally {
    await tab.close();
  }
});
