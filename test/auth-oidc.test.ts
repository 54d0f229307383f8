// Verified sign-in. The whole flow against a real OpenID Provider
// (oidc-provider on loopback, reached through the authorize URL with a cookie
// jar as a browser would): discovery, PKCE S256, nonce, ID token signed with
// the provider's key, userinfo, end_session_endpoint, starter tokens on the
// first sign-in. Then every defective ID token, crafted by the fake provider
// (test/helpers/fake-oidc.ts): 4xx, and no account, no identity, no token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import { startFakeOidc, type Defect, type FakeOidc } from './helpers/fake-oidc.js';

const REDIRECT = 'http://app.example/callback';
const STARTER = 10_000;

interface RealOp {
  issuer: string;
  env: Record<string, string>;
  accounts: Map<string, { name?: string; email?: string }>;
  /** The account the next interaction signs in. */
  next: { sub: string };
  close(): Promise<void>;
}

async function startRealOp(): Promise<RealOp> {
  const accounts = new Map<string, { name?: string; email?: string }>();
  const next = { sub: '' };
  const clientSecret = 'op-secret-' + randomBytes(8).toString('hex');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'hub-client', client_secret: clientSecret, redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'op-1', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], profile: ['name'], email: ['email'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, ...accounts.get(id) }) }),
  });
  const callback = provider.callback();
  // The login screen: signs in `next.sub` and grants the requested scopes, without a form.
  server.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId: next.sub, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: next.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  return {
    issuer,
    accounts,
    next,
    env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'hub-client', OIDC_CLIENT_SECRET: clientSecret, OIDC_REDIRECT_URI: REDIRECT },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Follows the authorize URL as a browser with a cookie jar until the provider redirects to the app. */
async function browse(start: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(REDIRECT)) return new URL(url);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [nv] = c.split(';');
      const i = nv.indexOf('=');
      if (/expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(nv.slice(0, i));
      else jar.set(nv.slice(0, i), nv.slice(i + 1));
    }
    const loc = res.headers.get('location');
    if (!loc) throw new Error(`no redirect from ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    url = new URL(loc, url).toString();
  }
  throw new Error('too many redirects');
}

let op: RealOp;
let t: TestHub;
let fake: FakeOidc;
let tf: TestHub;
before(async () => {
  op = await startRealOp();
  t = await startTestHub({ starterTokens: STARTER }, op.env);
  fake = await startFakeOidc();
  tf = await startTestHub({}, fake.env);
});
after(async () => {
  await t.close();
  await tf.close();
  await op.close();
  await fake.close();
});

async function realSignIn(sub: string) {
  op.next.sub = sub;
  const s = await t.client().auth.login('/home');
  const back = await browse(s.url);
  assert.equal(back.searchParams.get('state'), s.state);
  return { code: back.searchParams.get('code')!, state: s.state };
}

test('real provider: first sign-in creates the account with the starter tokens; the next one finds it', async () => {
  const anon = t.client().auth;
  op.accounts.set('ada-op', { name: 'Ada Lovelace', email: 'ada@example.org' });
  const s = await anon.login();
  const authz = new URL(s.url);
  assert.equal(authz.origin + authz.pathname, `${op.issuer}/auth`, 'the authorization_endpoint from discovery');
  assert.equal(authz.searchParams.get('code_challenge_method'), 'S256');

  const { code, state } = await realSignIn('ada-op');
  const d = await anon.callback(code, state);
  assert.deepEqual([d.user.name, d.user.email, d.from, d.tokenType], ['Ada Lovelace', 'ada@example.org', '/home', 'Bearer']);
  const bal = await t.client(d.accessToken).billing.balance();
  assert.equal(bal.balance, STARTER);

  // The provider refuses a code used twice, whatever state comes with it.
  const s2 = await anon.login();
  await assert.rejects(anon.callback(code, s2.state), apiError(400));

  const again = await realSignIn('ada-op');
  const cb2 = await anon.callback(again.code, again.state);
  assert.equal(cb2.user.id, d.user.id);
  assert.equal((await t.client(cb2.accessToken).billing.balance()).balance, STARTER, 'starter tokens once');
  const grants = await t.hub.ctx.em().execute(`select count(*)::int as n from ledger_entries where user_id = ?`, [d.user.id]);
  assert.equal(grants[0].n, 1);

  const out = await t.client(cb2.accessToken).auth.ssoLogout();
  const end = new URL(out.url);
  assert.equal(end.origin + end.pathname, `${op.issuer}/session/end`, 'the end_session_endpoint from discovery');
  assert.equal(end.searchParams.get('client_id'), 'hub-client');
  assert.equal(out.loggedOut, true);
  assert.equal((await fetch(end)).status, 200, 'the provider knows the logout address');
});

test('real provider: a PKCE verifier that does not match the challenge is refused, and nothing is created', async () => {
  op.accounts.set('mallory-op', { name: 'Mallory' });
  const { code, state } = await realSignIn('mallory-op');
  await t.hub.ctx.em().execute(`update login_states set code_verifier = ?`, [randomBytes(32).toString('base64url')]);
  // A refused call hands back no tokens.
  await assert.rejects(t.client().auth.callback(code, state), apiError(400));
  const ids = await t.hub.ctx.em().execute(`select count(*)::int as n from identities where subject = 'mallory-op'`);
  assert.equal(ids[0].n, 0);
});

const defects: Array<[string, Defect]> = [
  ['signed with another key under the provider’s kid', { key: 'same-kid' }],
  ['signed with a key the JWKS does not hold', { key: 'unknown-kid' }],
  ['HS256 with the client secret', { symmetric: true }],
  ['unsigned (alg none)', { unsigned: true }],
  ['issued to another audience', { aud: 'someone-else' }],
  ['several audiences and no azp', { aud: ['hub-client', 'someone-else'] }],
  ['azp of another client', { azp: 'someone-else' }],
  ['from another issuer', { iss: 'https://evil.example' }],
  ['with another nonce', { nonce: 'not-the-one-we-sent' }],
  ['without a nonce', { nonce: null }],
  ['expired', { exp: -600 }],
  ['userinfo about another subject', { userinfoSub: 'someone-else' }],
  ['no ID token at all', { noIdToken: true }],
];

for (const [name, defect] of defects) {
  test(`a defective ID token (${name}) → 400: no account, no identity, no token`, async () => {
    const sub = 'defect-' + randomBytes(4).toString('hex');
    const count = async (table: string) => (await tf.hub.ctx.em().execute(`select count(*)::int as n from ${table}`))[0].n;
    const [users, logins] = [await count('users'), await count('auth_sessions')];
    const anon = tf.client().auth;
    const s = await anon.login();
    // A refused call hands back no tokens.
    await assert.rejects(anon.callback(fake.authorize(s.url, { sub, name: 'Eve' }, defect), s.state), apiError(400, '4000'));
    assert.equal(await count('users'), users);
    assert.equal((await tf.hub.ctx.em().execute(`select count(*)::int as n from identities where subject = ?`, [sub]))[0].n, 0);
    assert.equal(await count('auth_sessions'), logins);
  });
}

test('an ID token whose subject is longer than an identity holds (255) → 400, nothing created', async () => {
  const anon = tf.client().auth;
  const s = await anon.login();
  const sub = 's'.repeat(256);
  await assert.rejects(anon.callback(fake.authorize(s.url, { sub, name: 'Long' }), s.state), apiError(400, '4000'));
  assert.equal((await tf.hub.ctx.em().execute(`select count(*)::int as n from identities where subject like 'sss%'`))[0].n, 0);
});

test('a provider whose key set cannot be read → 503 (its fault, not the sign-in\'s), nothing created; the next sign-in works', async () => {
  // A hub of its own: the key set is fetched on first use and then cached.
  const h = await startTestHub({}, fake.env);
  try {
    const anon = h.client().auth;
    fake.jwksDown = true;
    const s = await anon.login();
    try {
      await assert.rejects(anon.callback(fake.authorize(s.url, { sub: 'jwks-down', name: 'Nobody' }), s.state), apiError(503, '5030'));
    } finally {
      fake.jwksDown = false;
    }
    assert.equal((await h.hub.ctx.em().execute(`select count(*)::int as n from identities where subject = 'jwks-down'`))[0].n, 0);
    const again = await anon.login();
    assert.equal((await anon.callback(fake.authorize(again.url, { sub: 'jwks-down', name: 'Back' }), again.state)).user.name, 'Back');
  } finally {
    await h.close();
  }
});

test('the same sign-in with a good ID token succeeds (the defects above are the only difference)', async () => {
  const anon = tf.client().auth;
  const s = await anon.login();
  const r = await anon.callback(fake.authorize(s.url, { sub: 'good-1', name: 'Good' }), s.state);
  assert.equal(r.user.name, 'Good');
});

test('a provider that cannot be discovered → 503 at login, and nothing is stored', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  // A discovery document naming another issuer is refused the same way.
  for (const issuer of [`http://127.0.0.1:${port}`, `${fake.url}/`]) {
    const h = await startTestHub({}, { ...fake.env, OIDC_ISSUER: issuer });
    try {
      await assert.rejects(h.client().auth.login(), apiError(503, '5030'), issuer);
      assert.equal((await h.hub.ctx.em().execute(`select count(*)::int as n from login_states`))[0].n, 0);
    } finally {
      await h.close();
    }
  }
});
