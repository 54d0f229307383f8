// a refresh token now names its login (`ahr_<sid>.<secret>`) and any token
// of that shape the hub does not find ends the login named by `<sid>` — whether or not it was ever
// issued. The sid is no secret: it is in every access token's (unencrypted) JWT payload and in the
// refresh token's clear prefix. Whoever once saw one of them (an expired access token in a log, a
// proxy, a screenshot) ends the user's login, unauthenticated, as often as the user signs back in to
// that login. Only a token this login really issued and then rotated away proves "two parties held it".
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

test('a refresh token never issued, naming a login by its sid, does not end that login', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  const d = await anon.callback(idp.authorize(s.url, { sub: 'forged-sid-victim', name: 'Victim' }), s.state);

  // The sid, read from the access token without any key.
  const sid = JSON.parse(Buffer.from(d.accessToken.split('.')[1], 'base64url').toString('utf8')).sid as string;
  assert.match(sid, /^lgn_/);

  // An unauthenticated stranger presents a made-up secret under that sid.
  const forged = `ahr_${sid}.${'A'.repeat(48)}`;
  const r = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: forged } });
  assert.equal(r.status, 401);

  // The victim's login must go on: its access token and its real refresh token still work.
  const me = await t.api('GET', '/api/v1/me', { token: d.accessToken });
  assert.equal(me.status, 200, `a forged refresh token naming the login's sid ended it: the access token is refused (${me.status})`);
  const again = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(again.status, 200, `a forged refresh token naming the login's sid ended it: the real refresh token is refused (${again.status})`);
});
