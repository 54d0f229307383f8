// Audit (sign-in): unlinking an external identity must end the sign-ins made
// through it. A link's callback issues a login (refresh token + access JWT) for
// the account; DELETE /me/idem/{provider} only deletes the identity row, so
// that login keeps working — its refresh token rotates with a sliding expiry
// for ever. An attacker who held a victim's API key for a moment links their
// own provider identity, keeps the login, unlinks (nothing is left in
// /me/bindings) and survives the victim deleting the stolen key.
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

test('unlinking an identity ends the logins it made: its refresh token and access tokens are refused', async () => {
  const victim = await t.user('unlink-victim');
  // The victim's second key: the one the attacker stole.
  const stolen = await t.client(victim.key).keys.create('ci');
  const mallory = t.client(stolen.key);

  const l = await mallory.auth.linkIdentity('oidc');
  const cb = await mallory.auth.callback(idp.authorize(l.url, { sub: 'mallory-idp', name: 'Mallory' }), l.state);
  assert.equal(cb.user.id, victim.id);
  // Hide the tracks: the identity goes, the login stays with the attacker.
  assert.deepEqual(await mallory.auth.unlinkIdentity('oidc'), { deleted: true });

  // The victim finds nothing linked and revokes the stolen key.
  const owner = t.client(victim.key);
  assert.equal((await owner.bindings.get()).identities.length, 0);
  await owner.keys.remove(stolen.id);

  const refreshed = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: cb.refreshToken } });
  assert.equal(refreshed.status, 401, `the refresh token of a login made through an unlinked identity must be refused (got ${refreshed.status}, a new access token for ${refreshed.body?.data?.user?.id})`);
  const me = await t.api('GET', '/api/v1/me', { token: cb.accessToken });
  assert.equal(me.status, 401, `an access token of a login made through an unlinked identity must be refused (got ${me.status})`);
});
