// Audit (sign-in): every login (an OIDC callback, a link's callback included)
// inserts an auth_sessions row, and nothing ever deletes one — not when it is
// signed out, not when it expires. One account that can sign in through the
// provider (or an API key looping link → callback of its own identity) writes
// rows without bound, kept for good, and the refresh-hash unique index grows
// with them. Pair keys and login states are swept (docs/security.md, "Pair
// keys"); logins should be too: an account's ended (revoked or expired) logins
// go at its next sign-in.
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

async function login(sub: string) {
  const anon = t.client().auth;
  const s = await anon.login();
  return anon.callback(idp.authorize(s.url, { sub }), s.state);
}

test('signed-out and expired logins are not kept: the next sign-in of the account removes them', async () => {
  const first = await login('rows-1');
  const userId = first.user.id;
  await t.client(first.accessToken).auth.logout();
  for (let i = 0; i < 20; i++) {
    const d = await login('rows-1');
    await t.client(d.accessToken).auth.logout();
  }
  const expired = await login('rows-1');
  await t.hub.ctx.em().execute(`update auth_sessions set expires_at = now() - interval '1 second' where id in (select id from auth_sessions where user_id = ? and revoked_at is null)`, [userId]);
  void expired;

  const live = await login('rows-1');
  await t.client(live.accessToken).me();
  const [{ n }] = await t.hub.ctx.em().execute(`select count(*)::int as n from auth_sessions where user_id = ?`, [userId]);
  assert.equal(n, 1, `the account keeps ${n} login rows, 21 signed out and 1 expired among them; only its live login should remain`);
});
