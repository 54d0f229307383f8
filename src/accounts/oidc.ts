// The external identity provider: an OAuth2 authorization-code client
// (authorize URL, code exchange, userinfo). Nothing here is logged: codes and
// provider tokens are secrets.
import type { Config } from '../config.js';
import { fail } from '../errors.js';

/** identities.provider of the login provider (the only one a hub configures). */
export const LOGIN_PROVIDER = 'oidc';

export interface ProviderUser {
  sub: string;
  name: string | null;
  email: string | null;
}

const TIMEOUT_MS = 10_000;

export class OidcClient {
  constructor(private readonly cfg: NonNullable<Config['oidc']>) {}

  authorizeUrl(state: string): string {
    const u = new URL(this.cfg.authorizeUrl);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('client_id', this.cfg.clientId);
    u.searchParams.set('redirect_uri', this.cfg.redirectUri);
    u.searchParams.set('scope', 'openid profile email');
    u.searchParams.set('state', state);
    return u.toString();
  }

  logoutUrl(): string | null {
    if (!this.cfg.logoutUrl) return null;
    const u = new URL(this.cfg.logoutUrl);
    u.searchParams.set('client_id', this.cfg.clientId);
    return u.toString();
  }

  /** Exchanges the code and reads the user. A refused code → 400; an unreachable provider → 503. */
  async exchange(code: string): Promise<ProviderUser> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.cfg.redirectUri,
      client_id: this.cfg.clientId,
      client_secret: this.cfg.clientSecret,
    });
    const tok = await this.call(this.cfg.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form });
    const accessToken = typeof tok.access_token === 'string' ? tok.access_token : '';
    if (!accessToken) throw fail('UNAVAILABLE', 'identity provider returned no access token');
    const info = await this.call(this.cfg.userinfoUrl, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
    const sub = info.sub === undefined || info.sub === null ? '' : String(info.sub);
    if (!sub) throw fail('UNAVAILABLE', 'identity provider returned no subject');
    const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);
    return { sub, name: str(info.name) ?? str(info.preferred_username), email: str(info.email) };
  }

  private async call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
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
