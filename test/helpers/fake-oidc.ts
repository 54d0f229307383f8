// A small OpenID Provider on loopback for the sign-in tests: discovery, JWKS,
// a token endpoint that checks the client, the code and the PKCE verifier, and
// answers with an ID token signed with jose — well-formed, or defective in the
// one way a test asks for. The happy path is also run against oidc-provider
// (test/auth-oidc.test.ts); this one exists to craft the tokens a real provider never sends.
import { createServer } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';

export interface IdUser {
  sub: string;
  name?: string;
  email?: string;
}

/** How an issued ID token departs from a good one. */
export interface Defect {
  /** Signed with a key the JWKS does not hold: 'same-kid' claims the provider's kid, 'unknown-kid' another. */
  key?: 'same-kid' | 'unknown-kid';
  /** HS256 signed with the client secret. */
  symmetric?: boolean;
  /** alg none, no signature. */
  unsigned?: boolean;
  aud?: string | string[];
  azp?: string;
  iss?: string;
  /** null → no nonce claim. */
  nonce?: string | null;
  /** Seconds from now. */
  exp?: number;
  /** userinfo answers for another subject. */
  userinfoSub?: string;
  /** The token endpoint leaves the id_token out. */
  noIdToken?: boolean;
}

export interface FakeOidc {
  url: string;
  env: Record<string, string>;
  clientId: string;
  /** Plays the browser + provider login: checks the authorize URL and returns a code for it. */
  authorize(authorizeUrl: string, user: IdUser, defect?: Defect): string;
  tokenRequests: Array<Record<string, string>>;
  /** Who a browser opening the authorize URL is signed in as (GET /authorize redirects back with a code); unset → 400. */
  browserUser?: IdUser;
  /** The JWKS endpoint answers 500 while set. */
  jwksDown?: boolean;
  close(): Promise<void>;
}

/** `redirectUri`: the registered redirect (a browser test points it at the console's /auth/callback). */
export async function startFakeOidc(opts: { redirectUri?: string } = {}): Promise<FakeOidc> {
  const clientId = 'hub-client';
  const clientSecret = 'idp-secret-' + randomBytes(4).toString('hex');
  const redirectUri = opts.redirectUri ?? 'http://app.example/callback';
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { user: IdUser; nonce: string; challenge: string; defect: Defect }>();
  const tokens = new Map<string, { user: IdUser; defect: Defect }>();
  const tokenRequests: Array<Record<string, string>> = [];
  let url = '';

  async function idToken(user: IdUser, nonce: string, d: Defect): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { ...user, nonce: d.nonce === undefined ? nonce : d.nonce ?? undefined };
    if (d.azp) claims.azp = d.azp;
    if (d.unsigned) {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, iss: url, aud: clientId, iat: now, exp: now + 300 })}.`;
    }
    const jwt = new SignJWT(claims)
      .setIssuer(d.iss ?? url)
      .setAudience(d.aud ?? clientId)
      .setSubject(user.sub)
      .setIssuedAt(d.exp !== undefined ? now + d.exp - 300 : now)
      .setExpirationTime(now + (d.exp ?? 300));
    if (d.symmetric) return jwt.setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(new TextEncoder().encode(clientSecret));
    const key: CryptoKey = d.key ? other.privateKey : privateKey;
    return jwt.setProtectedHeader({ alg: 'RS256', kid: d.key === 'unknown-kid' ? 'k2' : 'k1' }).sign(key);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
        return json(200, {
          issuer: url,
          authorization_endpoint: `${url}/authorize`,
          token_endpoint: `${url}/token`,
          userinfo_endpoint: `${url}/userinfo`,
          jwks_uri: `${url}/jwks`,
          end_session_endpoint: `${url}/logout`,
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (req.method === 'GET' && path === '/jwks') return fake.jwksDown ? json(500, { error: 'server_error' }) : json(200, { keys: [jwk] });
      if (req.method === 'GET' && path === '/authorize') {
        // The provider's login page, already signed in as browserUser: straight back to the app with a code.
        if (!fake.browserUser) return json(400, { error: 'login_required' });
        const full = url + (req.url ?? '');
        const code = fake.authorize(full, fake.browserUser);
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', new URL(full).searchParams.get('state')!);
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (req.method === 'POST' && path === '/token') {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
        tokenRequests.push(form);
        const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':').map(decodeURIComponent);
        if (basic[0] !== clientId || basic[1] !== clientSecret) return json(401, { error: 'invalid_client' });
        const c = codes.get(form.code);
        if (form.grant_type !== 'authorization_code' || !c || form.redirect_uri !== redirectUri) return json(400, { error: 'invalid_grant' });
        codes.delete(form.code);
        if (createHash('sha256').update(form.code_verifier ?? '').digest('base64url') !== c.challenge) return json(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        const at = 'at-' + randomBytes(8).toString('hex');
        tokens.set(at, c);
        const body: Record<string, unknown> = { access_token: at, token_type: 'Bearer', expires_in: 3600 };
        if (!c.defect.noIdToken) body.id_token = await idToken(c.user, c.nonce, c.defect);
        return json(200, body);
      }
      if (req.method === 'GET' && path === '/userinfo') {
        const t = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
        return t ? json(200, { ...t.user, sub: t.defect.userinfoSub ?? t.user.sub }) : json(401, { error: 'invalid_token' });
      }
      json(404, { error: 'not_found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeOidc = {
    url,
    clientId,
    env: { OIDC_ISSUER: url, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret, OIDC_REDIRECT_URI: redirectUri },
    authorize(authorizeUrl, user, defect = {}) {
      const q = new URL(authorizeUrl).searchParams;
      const want = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge_method: 'S256' };
      for (const [k, v] of Object.entries(want)) if (q.get(k) !== v) throw new Error(`authorize URL: ${k}=${q.get(k)}, expected ${v}`);
      if (!q.get('scope')?.split(' ').includes('openid') || !q.get('nonce') || !q.get('code_challenge') || !q.get('state')) throw new Error('authorize URL lacks openid scope, nonce, code_challenge or state');
      const code = 'code-' + randomBytes(8).toString('hex');
      codes.set(code, { user, nonce: q.get('nonce')!, challenge: q.get('code_challenge')!, defect });
      return code;
    },
    tokenRequests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return fake;
}
