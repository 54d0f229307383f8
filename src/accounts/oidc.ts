// The external OpenID Provider: authorization code flow with PKCE (S256) and
// a nonce. Endpoints come from discovery; the ID token is verified before any
// claim is used. Nothing here is logged: codes, verifiers and provider tokens
// are secrets.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { fail } from '../errors.js';
import { Discovery } from './oidc-discovery.js';
import { verifyIdToken } from './oidc-id-token.js';

/** identities.provider of the login provider (the only one a hub configures). */
export const LOGIN_PROVIDER = 'oidc';

export interface ProviderUser {
  sub: string;
  name: string | null;
  email: string | null;
}

/** What one login attempt keeps server-side until its callback. */
export interface LoginAttempt {
  state: string;
  codeVerifier: string;
  nonce: string;
}

const TIMEOUT_MS = 10_000;
const secret = () => randomBytes(32).toString('base64url');

export class OidcClient {
  private readonly discovery: Discovery;
  constructor(private readonly cfg: NonNullable<Config['oidc']>) {
    this.discovery = new Discovery(cfg.issuer);
  }

  newAttempt(): LoginAttempt {
    return { state: secret(), codeVerifier: secret(), nonce: secret() };
  }

  async authorizeUrl(a: LoginAttempt): Promise<string> {
    const meta = await this.discovery.metadata();
    const u = new URL(meta.authorizationEndpoint);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('client_id', this.cfg.clientId);
    u.searchParams.set('redirect_uri', this.cfg.redirectUri);
    u.searchParams.set('scope', 'openid profile email');
    u.searchParams.set('state', a.state);
    u.searchParams.set('nonce', a.nonce);
    u.searchParams.set('code_challenge', createHash('sha256').update(a.codeVerifier).digest('base64url'));
    u.searchParams.set('code_challenge_method', 'S256');
    return u.toString();
  }

  /** The provider's end_session_endpoint with our client_id; null when it has none. */
  async logoutUrl(): Promise<string | null> {
    const meta = await this.discovery.metadata();
    if (!meta.endSessionEndpoint) return null;
    const u = new URL(meta.endSessionEndpoint);
    u.searchParams.set('client_id', this.cfg.clientId);
    return u.toString();
  }

  /**
   * Exchanges the code (with the PKCE verifier), verifies the ID token against
   * the nonce, then reads the profile. A refused code or a defective ID token → 400;
   * an unreachable provider → 503.
   */
  async exchange(code: string, codeVerifier: string, nonce: string): Promise<ProviderUser> {
    const meta = await this.discovery.metadata();
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: this.cfg.redirectUri, code_verifier: codeVerifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (meta.clientAuth === 'basic') {
      // RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic encoding.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = 'Basic ' + Buffer.from(`${enc(this.cfg.clientId)}:${enc(this.cfg.clientSecret)}`).toString('base64');
    } else {
      form.set('client_id', this.cfg.clientId);
      form.set('client_secret', this.cfg.clientSecret);
    }
    const tok = await this.call(meta.tokenEndpoint, { method: 'POST', headers, body: form });
    if (typeof tok.id_token !== 'string' || !tok.id_token) throw fail('VALIDATION', 'identity provider returned no ID token');
    const claims = await verifyIdToken(tok.id_token, meta, this.cfg.clientId, nonce);

    const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);
    let profile: Record<string, unknown> = claims;
    if (meta.userinfoEndpoint && typeof tok.access_token === 'string' && tok.access_token) {
      const info = await this.call(meta.userinfoEndpoint, { headers: { authorization: `Bearer ${tok.access_token}`, accept: 'application/json' } });
      // OpenID Connect Core §5.3.4: userinfo about another subject must not be used.
      if (info.sub !== claims.sub) throw fail('VALIDATION', 'identity provider userinfo is about another subject');
      profile = { ...claims, ...info };
    }
    return { sub: claims.sub, name: str(profile.name) ?? str(profile.preferred_username), email: str(profile.email) };
  }

  private async call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      // No redirects: the client secret and tokens go to the advertised endpoint only.
      res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch {
      throw fail('UNAVAILABLE', 'identity provider unreachable');
    }
    if (res.status >= 400 && res.status < 500) throw fail('VALIDATION', `identity provider refused the request (HTTP ${res.status})`);
    if (!res.ok) throw fail('UNAVAILABLE', `identity provider failed (HTTP ${res.status})`);
    try {
      const body = await res.json();
      if (typeof body !== 'object' || body === null) throw new Error('not an object');
      return body as Record<string, unknown>;
    } catch {
      throw fail('UNAVAILABLE', 'identity provider answered with something other than JSON');
    }
  }
}
