// Audit (sign-in): a refresh token rotates on every use, but presenting one
// that was already rotated away (proof that two parties hold the login: the
// user and whoever copied the token from the tab's sessionStorage) only
// answers 401 — the login itself goes on. The thief, who refreshed first,
// keeps a login whose expiry slides forward for ever; the user signs in again
// and has no endpoint that ends the thief's login. Reuse of a rotated refresh
// token must end the whole login (OAuth 2.0 Security BCP, RFC 9700 §4.14.2).
// Note: test/auth-login.test.ts ('refresh rotates…') asserts the opposite
// (the newest token still refreshes after the replay) and would change with the fix.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';

let idp: FakeOidc;
let t: TestHub;
before(async () => {
  idp = await startFakeOidc();
  t = await startTestHub({}, idp.env);
});
after(async () => {
  await t.close();
  await idp.close();
});

test('a replayed (rotated) refresh token ends the login: the current refresh token and access tokens stop working', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'reuse-victim', name: 'Victim' }), s.state);

  // The thief copied d.refreshToken and refreshes first.
  const thief = await anon.refresh(d.refreshToken);
  // Later (past the moment a client's own racing refreshes are forgiven), the victim's tab refreshes with the same, rotated, token.
  await t.hub.ctx.em().execute(`update auth_sessions set rotated_at = now() - interval '1 minute' where user_id = ?`, [d.user.id]);
  const replay = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(replay.status, 401);

  // The reuse proves the token leaked: the login must be over for everyone.
  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: thief.refreshToken } });
  assert.equal(again.status, 401, `after a rotated refresh token was replayed, the thief's current one still refreshed (${again.status})`);
  const me = await t.api('GET', '/api/v1/me', { token: thief.accessToken });
  assert.equal(me.status, 401, `after a rotated refresh token was replayed, the thief's access token still worked (${me.status})`);
});

test("two refreshes of one client racing with the same token: the loser gets 401, the login goes on", async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'racing-tab', name: 'Tab' }), s.state);
  const won = await anon.refresh(d.refreshToken);
  // The same token again a moment later (a second request of the same tab): refused, nothing ended.
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status, 401);
  assert.equal((await t.api('GET', '/api/v1/me', { token: won.accessToken })).status, 200);
  await anon.refresh(won.refreshToken);
});

test('a refresh token rotated long ago, presented again, ends the login though newer ones were rotated since', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'deep-reuse', name: 'Deep' }), s.state);
  let cur = await anon.refresh(d.refreshToken);
  for (let i = 0; i < 3; i++) cur = await anon.refresh(cur.refreshToken);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: cur.refreshToken } })).status, 401, 'the login ended');
});
