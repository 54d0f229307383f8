// every browser sign-in (`POST /auth/callback`) inserts an auth_sessions row, and no
// row is ever deleted: not when the login is ended (`POST /auth/logout`, sso-logout: revoked_at is
// set), not when its refresh token expires (30 days), and nothing bounds how many one account holds.
// A person scripting sign-ins of their own identity (an identity provider with a live SSO session
// answers /authorize at once) writes one permanent row per three hub requests, anonymous except for
// the callback: about 400 a minute per IP under the per-IP rate limit (1,200/min), for as long as it
// likes. API keys are capped (API_KEYS_PER_ACCOUNT = 50, src/account-caps.ts); logins are not.
// Assumed: an account keeps at most 50 logins (as many as API keys); ended logins go once their access
// tokens can no longer be used (JWT_TTL_SECONDS), or the oldest goes when a new one passes the cap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { API_KEYS_PER_ACCOUNT } from '../src/account-caps.js';

const ASSUMED_CAP = API_KEYS_PER_ACCOUNT;

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

test(`signing in and out in a loop leaves at most ${ASSUMED_CAP} login rows for the account`, async () => {
  const anon = t.client().auth;
  const who = { sub: 'looping-user', name: 'Looper' };
  let userId = '';
  const rounds = ASSUMED_CAP + 20;
  for (let i = 0; i < rounds; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, rounds - i) }, async () => {
      const s = await anon.login();
      const done = await anon.callback(idp.authorize(s.url, who), s.state);
      userId = done.user.id;
      await t.client(done.accessToken).auth.logout();
    }));
  }
  const [kept] = await t.hub.ctx.em().getConnection().execute(
    `select count(*)::int as n, count(*) filter (where revoked_at is null)::int as live from auth_sessions where user_id = ?`, [userId]);
  assert.ok(kept.n <= ASSUMED_CAP, `${rounds} sign-ins, each signed out: the account keeps ${kept.n} login rows (${kept.live} live) for good`);
});

test(`past ${ASSUMED_CAP} live logins a new sign-in ends the oldest: its refresh and access tokens are refused`, async () => {
  const anon = t.client().auth;
  const who = { sub: 'many-tabs', name: 'Tabs' };
  const logins = [];
  for (let i = 0; i < ASSUMED_CAP + 2; i++) {
    const s = await anon.login();
    logins.push(await anon.callback(idp.authorize(s.url, who), s.state));
  }
  const [kept] = await t.hub.ctx.em().getConnection().execute(
    `select count(*) filter (where revoked_at is null)::int as live from auth_sessions where user_id = ?`, [logins[0].user.id]);
  assert.equal(kept.live, ASSUMED_CAP);
  for (const old of logins.slice(0, 2)) {
    assert.equal((await t.api('GET', '/api/v1/me', { token: old.accessToken })).status, 401, 'the oldest login ended');
    assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: old.refreshToken } })).status, 401);
  }
  assert.equal((await t.api('GET', '/api/v1/me', { token: logins[2].accessToken })).status, 200, 'the newer ones go on');
});
