// reuse detection keys on the login's last 16 rotated-away hashes
// (auth_sessions.spent_hashes). A thief who copied the current refresh token refreshes it 17
// times in a row (a second's work): the victim's copy falls out of spent_hashes, and when the
// victim's tab presents it, the hub answers a plain 401 and the thief's login goes on for ever.
// The window is the thief's to choose, not the client's: a rotated token must stay known as
// this login's for as long as the login lives (e.g. a rotation counter in the token, not a
// bounded list of hashes).
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

test('a thief who refreshes 17 times in a row cannot make the victim\'s rotated token forgotten', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'flush-victim', name: 'Victim' }), s.state);

  // The thief copied d.refreshToken and rotates it 17 times at once.
  let thief = await anon.refresh(d.refreshToken);
  for (let i = 0; i < 16; i++) thief = await anon.refresh(thief.refreshToken);
  await t.hub.ctx.em().execute(`update auth_sessions set rotated_at = now() - interval '1 minute' where user_id = ?`, [d.user.id]);

  // The victim's tab comes back with its (rotated) token.
  const replay = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(replay.status, 401);

  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: thief.refreshToken } });
  assert.equal(again.status, 401, `the victim's rotated token was replayed, yet the thief's current one still refreshed (${again.status}): 17 rotations flushed it from spent_hashes`);
  const me = await t.api('GET', '/api/v1/me', { token: thief.accessToken });
  assert.equal(me.status, 401, `the thief's access token still works (${me.status})`);
});
