// CORS for consoles and clients served from another origin (ALLOWED_ORIGINS).
// Exact origins only, echoed back (never `*`), no credentials mode: the API
// authenticates with bearer tokens, which a page sends explicitly, so cookies
// never travel cross-origin. An origin not listed gets no CORS header at all
// and the browser keeps the answer from the page.

/** Request headers a cross-origin caller may send (besides the CORS-safelisted ones). */
const ALLOW_HEADERS = 'Authorization, Content-Type, Last-Event-ID, Idempotency-Key, Accept';
/** Response headers a cross-origin page may read (the safelisted ones need no listing). */
const EXPOSE_HEADERS = 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, WWW-Authenticate, Location';
/** How long a browser may reuse a preflight answer, seconds. */
const MAX_AGE_S = 600;

export class Cors {
  private readonly origins: ReadonlySet<string>;
  constructor(origins: readonly string[]) {
    this.origins = new Set(origins);
  }

  private allows(origin: string | undefined): origin is string {
    return origin !== undefined && this.origins.has(origin);
  }

  /** Headers for an actual answer (any status, streams too). Vary is set whenever origins are configured: caches must key on Origin. */
  answer(origin: string | undefined): Record<string, string> | undefined {
    if (this.origins.size === 0) return undefined;
    if (!this.allows(origin)) return { Vary: 'Origin' };
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE_HEADERS, Vary: 'Origin' };
  }

  /** Headers for a preflight (OPTIONS) of a path answering `methods`. */
  preflight(origin: string | undefined, methods: readonly string[]): Record<string, string> | undefined {
    if (this.origins.size === 0) return undefined;
    if (!this.allows(origin)) return { Vary: 'Origin' };
    return {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': methods.join(', '),
      'Access-Control-Allow-Headers': ALLOW_HEADERS,
      'Access-Control-Max-Age': String(MAX_AGE_S),
      Vary: 'Origin',
    };
  }
}
