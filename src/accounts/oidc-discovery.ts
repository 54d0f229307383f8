// The OpenID Provider's metadata, read from its discovery document
// (`{issuer}/.well-known/openid-configuration`) and kept for a while. Nothing
// the provider says is used until it has been checked for shape here.
import { createRemoteJWKSet } from 'jose';
import { fail } from '../errors.js';

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string | null;
  endSessionEndpoint: string | null;
  /** client_secret_basic unless the provider only offers client_secret_post. */
  clientAuth: 'basic' | 'post';
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

const TTL_MS = 60 * 60_000;
const TIMEOUT_MS = 10_000;

function url(v: unknown, field: string, required: true): string;
function url(v: unknown, field: string, required: false): string | null;
function url(v: unknown, field: string, required: boolean): string | null {
  if (v === undefined || v === null) {
    if (required) throw fail('UNAVAILABLE', `identity provider discovery document has no ${field}`);
    return null;
  }
  let u: URL | null = null;
  try {
    u = typeof v === 'string' ? new URL(v) : null;
  } catch {
    u = null;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) throw fail('UNAVAILABLE', `identity provider discovery document: ${field} is not an http(s) URL`);
  return u.toString();
}

export class Discovery {
  private cached?: { at: number; meta: Promise<ProviderMetadata> };
  private jwks?: { uri: string; set: ReturnType<typeof createRemoteJWKSet> };

  constructor(private readonly issuer: string) {}

  /** The provider's metadata; a failed read is not cached, so the next request tries again. */
  metadata(): Promise<ProviderMetadata> {
    if (this.cached && Date.now() - this.cached.at < TTL_MS) return this.cached.meta;
    const meta = this.load();
    this.cached = { at: Date.now(), meta };
    meta.catch(() => {
      if (this.cached?.meta === meta) this.cached = undefined;
    });
    return meta;
  }

  private async load(): Promise<ProviderMetadata> {
    const doc = this.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration';
    let body: Record<string, unknown>;
    try {
      const res = await fetch(doc, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = (await res.json()) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null) throw new Error('not a JSON object');
    } catch (e) {
      throw fail('UNAVAILABLE', `identity provider discovery failed (${(e as Error).message.slice(0, 100)})`);
    }
    // OpenID Connect Discovery §4.3: the document must name exactly the issuer we asked.
    if (body.issuer !== this.issuer) throw fail('UNAVAILABLE', `identity provider discovery document names issuer ${JSON.stringify(String(body.issuer).slice(0, 200))}, not the configured OIDC_ISSUER`);
    const jwksUri = url(body.jwks_uri, 'jwks_uri', true);
    if (this.jwks?.uri !== jwksUri) this.jwks = { uri: jwksUri, set: createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: TIMEOUT_MS }) };
    const methods = Array.isArray(body.token_endpoint_auth_methods_supported) ? body.token_endpoint_auth_methods_supported : ['client_secret_basic'];
    return {
      issuer: this.issuer,
      authorizationEndpoint: url(body.authorization_endpoint, 'authorization_endpoint', true),
      tokenEndpoint: url(body.token_endpoint, 'token_endpoint', true),
      userinfoEndpoint: url(body.userinfo_endpoint, 'userinfo_endpoint', false),
      endSessionEndpoint: url(body.end_session_endpoint, 'end_session_endpoint', false),
      clientAuth: !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? 'post' : 'basic',
      jwks: this.jwks.set,
    };
  }
}
