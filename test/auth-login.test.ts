// Browser login against a local OpenID Provider (test/helpers/fake-oidc.ts:
// discovery, JWKS, signed ID tokens, PKCE checked): login, callback, refresh
// rotation, logout, sso-logout, expiry, and linking an external identity to an
// existing account. The real-provider flow and the defective ID tokens are in
// test/auth-oidc.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
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
  const s = await t.api('GET', '/api/v1/auth/login' + (from ? `?from=${encodeURIComponent(from)}` : ''));
  assert.equal(s.status, 200, s.text);
  const cb = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(s.body.data.url, user), state: s.body.data.state } });
  assert.equal(cb.status, 200, cb.text);
  return cb.body.data;
}

test('login returns the provider authorize URL with a state; callback signs the user in', async () => {
  const s = await t.api('GET', '/api/v1/auth/login?from=/agents/mine');
  assert.equal(s.status, 200);
  const url = new URL(s.body.data.url);
  assert.equal(url.origin + url.pathname, `${idp.url}/authorize`);
  assert.equal(url.searchParams.get('state'), s.body.data.state);
  assert.equal(url.searchParams.get('client_id'), 'hub-client');
  assert.equal(url.searchParams.get('response_type'), 'code');
  assert.equal(url.searchParams.get('redirect_uri'), 'http://app.example/callback');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(url.searchParams.get('nonce'));

  const code = idp.authorize(s.body.data.url, { sub: 'alice-1', name: 'Alice', email: 'alice@example.com' });
  const cb = await t.api('POST', '/api/v1/auth/callback', { body: { code, state: s.body.data.state } });
  assert.equal(cb.status, 200, cb.text);
  const d = cb.body.data;
  assert.equal(d.accessToken.split('.').length, 3);
  assert.match(d.refreshToken, /^ahr_/);
  assert.deepEqual([d.tokenType, d.expiresIn, d.from, d.user.name, d.user.email], ['Bearer', 900, '/agents/mine', 'Alice', 'alice@example.com']);
  assert.equal(idp.tokenRequests.at(-1)!.code, code);
  assert.ok(idp.tokenRequests.at(-1)!.code_verifier, 'the PKCE verifier reached the token endpoint');
  assert.equal(idp.tokenRequests.at(-1)!.client_secret, undefined, 'client_secret_basic: the secret is not in the form');

  const me = await t.api('GET', '/api/v1/me', { token: d.accessToken });
  assert.equal(me.status, 200);
  assert.equal(me.body.data.id, d.user.id);

  // The state was single-use.
  const replay = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(s.body.data.url, { sub: 'alice-1' }), state: s.body.data.state } });
  assert.equal(replay.status, 400);

  // Same subject again → same account.
  const again = await login({ sub: 'alice-1', name: 'Alice' });
  assert.equal(again.user.id, d.user.id);
  const other = await login({ sub: 'bob-1', email: 'bob@example.com' });
  assert.notEqual(other.user.id, d.user.id);
  assert.equal(other.user.name, 'bob');
});

test('callback refuses a state we never issued, a refused code, and malformed bodies', async () => {
  const s = await t.api('GET', '/api/v1/auth/login');
  const unknown = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(s.body.data.url, { sub: 'x' }), state: 'made-up' } });
  assert.equal(unknown.status, 400);
  const bad = await t.api('POST', '/api/v1/auth/callback', { body: { code: 'never-issued', state: s.body.data.state } });
  assert.equal(bad.status, 400);
  for (const body of [{}, { code: '', state: 'a' }, { code: 'a', state: '' }, { code: 'a' }, { code: 'a', state: 'b', extra: 1 }]) {
    assert.equal((await t.api('POST', '/api/v1/auth/callback', { body })).status, 400, JSON.stringify(body));
  }
  for (const from of ['//evil.example', 'https://evil.example', '/\\evil.example']) {
    assert.equal((await t.api('GET', `/api/v1/auth/login?from=${encodeURIComponent(from)}`)).status, 400, from);
  }
});

test('an expired state is refused', async () => {
  const s = await t.api('GET', '/api/v1/auth/login');
  await t.hub.ctx.em().execute(`update login_states set expires_at = now() - interval '1 second'`);
  const r = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(s.body.data.url, { sub: 'late' }), state: s.body.data.state } });
  assert.equal(r.status, 400);
});

test('refresh rotates the refresh token: the old one is refused afterwards', async () => {
  const d = await login({ sub: 'carol-1', name: 'Carol' });
  const r1 = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(r1.status, 200, r1.text);
  assert.notEqual(r1.body.data.refreshToken, d.refreshToken);
  assert.equal(r1.body.data.user.id, d.user.id);
  assert.equal((await t.api('GET', '/api/v1/me', { token: r1.body.data.accessToken })).status, 200);
  const old = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } });
  assert.equal(old.status, 401);
  const r2 = await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: r1.body.data.refreshToken } });
  assert.equal(r2.status, 200);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: 'ahr_nothing' } })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: {} })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refreshToken: 'x' } })).status, 400);
});

test('logout ends the login at once: its access token and refresh token stop working', async () => {
  const d = await login({ sub: 'dave-1' });
  assert.equal((await t.api('GET', '/api/v1/me', { token: d.accessToken })).status, 200);
  const out = await t.api('POST', '/api/v1/auth/logout', { token: d.accessToken });
  assert.equal(out.status, 200);
  assert.equal(out.body.data.loggedOut, true);
  assert.equal((await t.api('GET', '/api/v1/me', { token: d.accessToken })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/auth/logout')).status, 401);
  const u = await t.user();
  assert.equal((await t.api('POST', '/api/v1/auth/logout', { token: u.key })).status, 400, 'an API key is not a login');
});

test('sso-logout returns the provider logout URL and, with a login token, ends that login', async () => {
  const anon = await t.api('GET', '/api/v1/auth/sso-logout');
  assert.equal(anon.status, 200);
  const end = new URL(anon.body.data.url);
  assert.equal(end.origin + end.pathname, `${idp.url}/logout`, 'the discovered end_session_endpoint');
  assert.equal(end.searchParams.get('client_id'), 'hub-client');
  assert.equal(anon.body.data.loggedOut, false);
  const d = await login({ sub: 'erin-1' });
  const r = await t.api('GET', '/api/v1/auth/sso-logout', { token: d.accessToken });
  assert.equal(r.body.data.loggedOut, true);
  assert.equal((await t.api('GET', '/api/v1/me', { token: d.accessToken })).status, 401);
});

test('linking: a signed-in user links a provider identity, signs in with it, and unlinks it', async () => {
  const u = await t.user('frank');
  assert.equal((await t.api('POST', '/api/v1/me/idem/github/link', { token: u.key })).status, 404);
  assert.equal((await t.api('POST', '/api/v1/me/idem/oidc/link')).status, 401);
  const l = await t.api('POST', '/api/v1/me/idem/oidc/link', { token: u.key });
  assert.equal(l.status, 200);
  assert.equal(new URL(l.body.data.url).searchParams.get('state'), l.body.data.state);
  const cb = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(l.body.data.url, { sub: 'frank-idp', name: 'Frank F' }), state: l.body.data.state } });
  assert.equal(cb.status, 200, cb.text);
  assert.deepEqual([cb.body.data.user.id, cb.body.data.linked], [u.id, 'oidc']);

  const b = await t.api('GET', '/api/v1/me/bindings', { token: u.key });
  assert.deepEqual(b.body.data.identities.map((i: any) => [i.provider, i.displayName]), [['oidc', 'Frank F']]);
  assert.equal((await login({ sub: 'frank-idp' })).user.id, u.id, 'the linked identity signs in to the same account');

  // An identity that already belongs to another account cannot be linked.
  const g = await t.user('grace');
  const l2 = await t.api('POST', '/api/v1/me/idem/oidc/link', { token: g.key });
  const taken = await t.api('POST', '/api/v1/auth/callback', { body: { code: idp.authorize(l2.body.data.url, { sub: 'frank-idp' }), state: l2.body.data.state } });
  assert.equal(taken.status, 409);

  assert.equal((await t.api('DELETE', '/api/v1/me/idem/oidc', { token: u.key })).status, 200);
  assert.equal((await t.api('DELETE', '/api/v1/me/idem/oidc', { token: u.key })).status, 404);
  assert.equal((await t.api('DELETE', '/api/v1/me/idem/other', { token: u.key })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/me/bindings', { token: u.key })).body.data.identities.length, 0);
  const fresh = await login({ sub: 'frank-idp' });
  assert.notEqual(fresh.user.id, u.id, 'after unlinking, the identity is no longer the way into that account');

  // The only way into a login-created account cannot be unlinked.
  const last = await t.api('DELETE', '/api/v1/me/idem/oidc', { token: fresh.accessToken });
  assert.equal(last.status, 409);
});

test('an expired access token → 401 with code 4011', async () => {
  const idp2 = await startFakeOidc();
  const short = await startTestHub({}, { ...idp2.env, JWT_TTL_SECONDS: '1' });
  try {
    const s = await short.api('GET', '/api/v1/auth/login');
    const cb = await short.api('POST', '/api/v1/auth/callback', { body: { code: idp2.authorize(s.body.data.url, { sub: 'z' }), state: s.body.data.state } });
    assert.equal(cb.body.data.expiresIn, 1);
    assert.equal((await short.api('GET', '/api/v1/me', { token: cb.body.data.accessToken })).status, 200);
    await new Promise((r) => setTimeout(r, 2100));
    const r = await short.api('GET', '/api/v1/me', { token: cb.body.data.accessToken });
    assert.deepEqual([r.status, r.body.code], [401, '4011']);
    // The refresh token still gets a fresh access token.
    const ref = await short.api('POST', '/api/v1/auth/refresh', { body: { refresh_token: cb.body.data.refreshToken } });
    assert.equal((await short.api('GET', '/api/v1/me', { token: ref.body.data.accessToken })).status, 200);
  } finally {
    await short.close();
    await idp2.close();
  }
});

test('without OIDC configuration the flow answers 503 NOT_CONFIGURED', async () => {
  const bare = await startTestHub();
  try {
    const u = await bare.user();
    for (const [m, p, body, token] of [
      ['GET', '/api/v1/auth/login'], ['POST', '/api/v1/auth/callback', { code: 'a', state: 'b' }], ['GET', '/api/v1/auth/sso-logout'],
      ['POST', '/api/v1/me/idem/oidc/link', undefined, u.key],
    ] as const) {
      const r = await bare.api(m, p, { body, token });
      assert.deepEqual([r.status, r.body.code], [503, '5031'], p);
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
