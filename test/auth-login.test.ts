// Browser login against a local OpenID Provider (test/helpers/fake-oidc.ts:
// discovery, JWKS, signed ID tokens, PKCE checked): login, callback, refresh
// rotation, logout, sso-logout, expiry, and linking an external identity to an
// existing account. The real-provider flow and the defective ID tokens are in
// test/auth-oidc.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { loadConfig } from '../src/config.js';

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

async function login(user: { sub: string; name?: string; email?: string }, from?: string) {
  const anon = t.client().auth;
  const s = await anon.login(from);
  return anon.callback(idp.authorize(s.url, user), s.state);
}

test('login returns the provider authorize URL with a state; callback signs the user in', async () => {
  const anon = t.client().auth;
  const s = await anon.login('/agents/mine');
  const url = new URL(s.url);
  assert.equal(url.origin + url.pathname, `${idp.url}/authorize`);
  assert.equal(url.searchParams.get('state'), s.state);
  assert.equal(url.searchParams.get('client_id'), 'hub-client');
  assert.equal(url.searchParams.get('response_type'), 'code');
  assert.equal(url.searchParams.get('redirect_uri'), 'http://app.example/callback');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(url.searchParams.get('nonce'));

  const code = idp.authorize(s.url, { sub: 'alice-1', name: 'Alice', email: 'alice@example.com' });
  const d = await anon.callback(code, s.state);
  assert.equal(d.accessToken.split('.').length, 3);
  assert.match(d.refreshToken, /^ahr_/);
  assert.deepEqual([d.tokenType, d.expiresIn, d.from, d.user.name, d.user.email], ['Bearer', 900, '/agents/mine', 'Alice', 'alice@example.com']);
  assert.equal(idp.tokenRequests.at(-1)!.code, code);
  assert.ok(idp.tokenRequests.at(-1)!.code_verifier, 'the PKCE verifier reached the token endpoint');
  assert.equal(idp.tokenRequests.at(-1)!.client_secret, undefined, 'client_secret_basic: the secret is not in the form');

  const me = await t.client(d.accessToken).me();
  assert.equal(me.id, d.user.id);

  // The state was single-use.
  await assert.rejects(anon.callback(idp.authorize(s.url, { sub: 'alice-1' }), s.state), apiError(400));

  // Same subject again → same account.
  const again = await login({ sub: 'alice-1', name: 'Alice' });
  assert.equal(again.user.id, d.user.id);
  const other = await login({ sub: 'bob-1', email: 'bob@example.com' });
  assert.notEqual(other.user.id, d.user.id);
  assert.equal(other.user.name, 'bob');
});

test('callback refuses a state we never issued, a refused code, and malformed bodies', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  await assert.rejects(anon.callback(idp.authorize(s.url, { sub: 'x' }), 'made-up'), apiError(400));
  await assert.rejects(anon.callback('never-issued', s.state), apiError(400));
  // A missing field is sent as absent (the client drops undefined fields).
  const none = undefined as unknown as string;
  for (const [code, state] of [[none, none], ['', 'a'], ['a', ''], ['a', none]]) {
    await assert.rejects(anon.callback(code, state), apiError(400), JSON.stringify({ code, state }));
  }
  // An unknown field: outside the typed shape.
  assert.equal((await t.api('POST', '/api/v1/auth/callback', { body: { code: 'a', state: 'b', extra: 1 } })).status, 400);
  for (const from of ['//evil.example', 'https://evil.example', '/\\evil.example']) {
    await assert.rejects(anon.login(from), apiError(400), from);
  }
});

test('an expired state is refused', async () => {
  const anon = t.client().auth;
  const s = await anon.login();
  await t.hub.ctx.em().execute(`update login_states set expires_at = now() - interval '1 second'`);
  await assert.rejects(anon.callback(idp.authorize(s.url, { sub: 'late' }), s.state), apiError(400));
});

test('refresh rotates the refresh token: the old one is refused afterwards (and ends the login: test/security-refresh-reuse.test.ts)', async () => {
  const anon = t.client().auth;
  const d = await login({ sub: 'carol-1', name: 'Carol' });
  const r1 = await anon.refresh(d.refreshToken);
  assert.notEqual(r1.refreshToken, d.refreshToken);
  assert.equal(r1.user.id, d.user.id);
  await t.client(r1.accessToken).me();
  const r2 = await anon.refresh(r1.refreshToken);
  await t.client(r2.accessToken).me();
  await assert.rejects(anon.refresh(d.refreshToken), apiError(401));
  await assert.rejects(anon.refresh('ahr_nothing'), apiError(401));
  await assert.rejects(anon.refresh(undefined as unknown as string), apiError(400), 'an empty body');
  // The field under another name: outside the typed shape.
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refreshToken: 'x' } })).status, 400);
});

test('logout ends the login at once: its access token and refresh token stop working', async () => {
  const d = await login({ sub: 'dave-1' });
  const c = t.client(d.accessToken);
  await c.me();
  const out = await c.auth.logout();
  assert.equal(out.loggedOut, true);
  await assert.rejects(c.me(), apiError(401));
  await assert.rejects(t.client().auth.refresh(d.refreshToken), apiError(401));
  await assert.rejects(t.client().auth.logout(), apiError(401));
  const u = await t.user();
  await assert.rejects(t.client(u.key).auth.logout(), apiError(400), 'an API key is not a login');
});

test('sso-logout returns the provider logout URL and, with a login token, ends that login', async () => {
  const anon = await t.client().auth.ssoLogout();
  const end = new URL(anon.url);
  assert.equal(end.origin + end.pathname, `${idp.url}/logout`, 'the discovered end_session_endpoint');
  assert.equal(end.searchParams.get('client_id'), 'hub-client');
  assert.equal(anon.loggedOut, false);
  const d = await login({ sub: 'erin-1' });
  const r = await t.client(d.accessToken).auth.ssoLogout();
  assert.equal(r.loggedOut, true);
  await assert.rejects(t.client(d.accessToken).me(), apiError(401));
});

test('linking: a signed-in user links a provider identity, signs in with it, and unlinks it', async () => {
  const u = await t.user('frank');
  const c = t.client(u.key);
  const anon = t.client().auth;
  await assert.rejects(c.auth.linkIdentity('github'), apiError(404));
  await assert.rejects(anon.linkIdentity('oidc'), apiError(401));
  const l = await c.auth.linkIdentity('oidc');
  assert.equal(new URL(l.url).searchParams.get('state'), l.state);
  // The link is finished signed in as the account that started it (the console's callback page sends its bearer).
  const cb = await c.auth.callback(idp.authorize(l.url, { sub: 'frank-idp', name: 'Frank F' }), l.state);
  assert.deepEqual([cb.user.id, cb.linked], [u.id, 'oidc']);

  const b = await c.bindings.get();
  assert.deepEqual(b.identities.map((i) => [i.provider, i.displayName]), [['oidc', 'Frank F']]);
  assert.equal((await login({ sub: 'frank-idp' })).user.id, u.id, 'the linked identity signs in to the same account');

  // An identity that already belongs to another account cannot be linked.
  const g = await t.user('grace');
  const l2 = await t.client(g.key).auth.linkIdentity('oidc');
  await assert.rejects(t.client(g.key).auth.callback(idp.authorize(l2.url, { sub: 'frank-idp' }), l2.state), apiError(409));

  assert.deepEqual(await c.auth.unlinkIdentity('oidc'), { deleted: true });
  await assert.rejects(c.auth.unlinkIdentity('oidc'), apiError(404));
  await assert.rejects(c.auth.unlinkIdentity('other'), apiError(404));
  assert.equal((await c.bindings.get()).identities.length, 0);
  const fresh = await login({ sub: 'frank-idp' });
  assert.notEqual(fresh.user.id, u.id, 'after unlinking, the identity is no longer the way into that account');

  // The only way into a login-created account cannot be unlinked.
  await assert.rejects(t.client(fresh.accessToken).auth.unlinkIdentity('oidc'), apiError(409));
});

test('a link is finished only by the account that started it: anonymous or another account → 400, nothing linked, the attempt spent', async () => {
  // Link CSRF: an attacker starts a link for their own account and gets a victim's browser to finish it
  // (the provider's page, then the console's callback posting code and state). Were it accepted, the
  // victim's provider identity would sign them in to the attacker's account from then on.
  const attacker = await t.user('link-attacker');
  const victim = await t.user('link-victim');
  const mallory = t.client(attacker.key);
  for (const finisher of [t.client(), t.client(victim.key)]) {
    const l = await mallory.auth.linkIdentity('oidc');
    const code = idp.authorize(l.url, { sub: 'victim-idp', name: 'Victim' });
    await assert.rejects(finisher.auth.callback(code, l.state), apiError(400));
    // The attempt is spent: not even its own account can finish it now.
    await assert.rejects(mallory.auth.callback(idp.authorize(l.url, { sub: 'victim-idp' }), l.state), apiError(400));
  }
  assert.equal((await mallory.bindings.get()).identities.length, 0, 'nothing was linked to the attacker');
  const own = await login({ sub: 'victim-idp' });
  assert.notEqual(own.user.id, attacker.id, 'the victim\'s identity signs in to an account of its own');
  // Another account's bearer does not change a plain sign-in: it signs in whom the provider names.
  const s = await t.client().auth.login();
  assert.equal((await t.client(victim.key).auth.callback(idp.authorize(s.url, { sub: 'victim-idp' }), s.state)).user.id, own.user.id);
});

test('an expired access token → 401 with code 4011', async () => {
  const idp2 = await startFakeOidc();
  // Three seconds: a token's `exp` counts from its issue time rounded down to the second, so a
  // one-second token could be expired before a loaded machine got to use it once.
  const short = await startTestHub({}, { ...idp2.env, JWT_TTL_SECONDS: '3' });
  try {
    const anon = short.client().auth;
    const s = await anon.login();
    const cb = await anon.callback(idp2.authorize(s.url, { sub: 'z' }), s.state);
    assert.equal(cb.expiresIn, 3);
    await short.client(cb.accessToken).me();
    // Until just past the token's own expiry.
    const { exp } = JSON.parse(Buffer.from(cb.accessToken.split('.')[1], 'base64url').toString()) as { exp: number };
    await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 100));
    await assert.rejects(short.client(cb.accessToken).me(), apiError(401, '4011'));
    // The refresh token still gets a fresh access token.
    const ref = await anon.refresh(cb.refreshToken);
    await short.client(ref.accessToken).me();
  } finally {
    await short.close();
    await idp2.close();
  }
});

test('without OIDC configuration the flow answers 503 NOT_CONFIGURED', async () => {
  const bare = await startTestHub();
  try {
    const u = await bare.user();
    const anon = bare.client().auth;
    for (const [name, call] of [
      ['login', () => anon.login()], ['callback', () => anon.callback('a', 'b')], ['sso-logout', () => anon.ssoLogout()],
      ['link', () => bare.client(u.key).auth.linkIdentity('oidc')],
    ] as const) {
      await assert.rejects(call(), apiError(503, '5031'), name);
    }
  } finally {
    await bare.close();
  }
});

test('configuration: OIDC_ISSUER needs the client variables; the retired endpoint variables stop the hub from starting', () => {
  const base = { SECRET_KEY: 'x' };
  assert.equal(loadConfig(base).oidc, undefined);
  const ok = loadConfig({ ...base, OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_REDIRECT_URI: 'https://app.example/cb' });
  // The console's "Sign in with <name>": the issuer's host unless OIDC_PROVIDER_NAME names it.
  assert.deepEqual(ok.oidc, { issuer: 'https://id.example', clientId: 'c', clientSecret: 's', redirectUri: 'https://app.example/cb', name: 'id.example' });
  const named = loadConfig({ ...base, OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_REDIRECT_URI: 'https://app.example/cb', OIDC_PROVIDER_NAME: 'Example ID' });
  assert.equal(named.oidc?.name, 'Example ID');
  assert.throws(() => loadConfig({ ...base, OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c' }), /OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI/);
  assert.throws(() => loadConfig({ ...base, OIDC_ISSUER: 'ftp://id.example', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_REDIRECT_URI: 'x' }), /http\(s\)/);
  assert.throws(() => loadConfig({ ...base, OIDC_AUTHORIZE_URL: 'https://id.example/authorize' }), /replaced by OIDC_ISSUER/);
});
