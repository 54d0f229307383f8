// Which limits a request counts against, and the 429 it gets past them. Runs
// as the request wrapper's `before` hook, after authentication, so a caller is
// counted by its API key (or its account when it signed in with a JWT) and,
// whoever it is, by its IP. Two endpoints that cost money or a third party's
// patience have tighter limits of their own.
import type { Config } from '../config.js';
import { fail } from '../errors.js';
import type { Principal, Req, Route } from '../server/http.js';
import type { Bucket, BucketState, Limiter, Verdict } from './limiter.js';
import { limitAddress } from './address.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Limits = Pick<Config, 'rateLimitPerMinute' | 'rateLimitPerIpPerMinute' | 'rateLimitPhoneCodePerHour' | 'rateLimitModelTestPerMinute' | 'rateLimitAiFillPerMinute' | 'trustProxy'>;

/** Endpoints with a tighter limit, counted per account (or per IP when anonymous). */
const TIGHT: Record<string, { name: string; limit: (c: Limits) => number; windowMs: number }> = {
  'POST /api/v1/me/phone/send-code': { name: 'phone-code', limit: (c) => c.rateLimitPhoneCodePerHour, windowMs: HOUR },
  'POST /api/v1/model-configs/test': { name: 'model-test', limit: (c) => c.rateLimitModelTestPerMinute, windowMs: MINUTE },
  'POST /api/v1/agents/ai-fill': { name: 'ai-fill', limit: (c) => c.rateLimitAiFillPerMinute, windowMs: MINUTE },
};

/**
 * The client's address as its limits count it (an IPv6 client by its /64: address.ts): behind a
 * trusted proxy, the entry the proxy appended to X-Forwarded-For.
 */
export function clientIp(req: Pick<Req, 'ip' | 'headers'>, trustProxy: boolean): string {
  if (trustProxy) {
    const fwd = req.headers['x-forwarded-for'];
    const last = fwd?.split(',').pop()?.trim();
    if (last) return limitAddress(last.slice(0, 64));
  }
  return limitAddress(req.ip);
}

/** The buckets one request counts against (pure: no I/O). */
export function bucketsFor(c: Limits, route: Pick<Route, 'method' | 'path'>, principal: Principal | undefined, ip: string): Bucket[] {
  const out: Bucket[] = [];
  const caller = principal ? (principal.keyId ? `key:${principal.keyId}` : `user:${principal.userId}`) : `anon:${ip}`;
  if (c.rateLimitPerMinute > 0) out.push({ key: `rl:${caller}`, limit: c.rateLimitPerMinute, windowMs: MINUTE });
  if (c.rateLimitPerIpPerMinute > 0) out.push({ key: `rl:ip:${ip}`, limit: c.rateLimitPerIpPerMinute, windowMs: MINUTE });
  const tight = TIGHT[`${route.method} ${route.path}`];
  const tightLimit = tight?.limit(c) ?? 0;
  if (tight && tightLimit > 0) {
    // Per account, not per key: a user with ten keys gets no more phone codes.
    const who = principal ? `user:${principal.userId}` : `anon:${ip}`;
    out.push({ key: `rl:${tight.name}:${who}`, limit: tightLimit, windowMs: tight.windowMs });
  }
  return out;
}

/** X-RateLimit-* for the bucket that binds: the refusing one, else the one with least room. */
export function rateHeaders(states: BucketState[], allowed: boolean, now = Date.now()): Record<string, string> {
  if (states.length === 0) return {};
  const pick = allowed
    ? states.reduce((a, b) => (b.bucket.limit - b.count < a.bucket.limit - a.count ? b : a))
    : states.filter((s) => s.count >= s.bucket.limit).reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
  const resetS = Math.max(1, Math.ceil(pick.resetMs / 1000));
  const h: Record<string, string> = {
    'X-RateLimit-Limit': String(pick.bucket.limit),
    'X-RateLimit-Remaining': String(Math.max(0, pick.bucket.limit - pick.count)),
    // Epoch seconds at which the window closes (the GitHub convention).
    'X-RateLimit-Reset': String(Math.ceil((now + pick.resetMs) / 1000)),
  };
  if (!allowed) h['Retry-After'] = String(resetS);
  return h;
}

/** The X-RateLimit-* headers of an allowed request; a refused one throws RATE_LIMITED. */
function verdict(v: Verdict): Record<string, string> {
  if (!v.allowed) throw fail('RATE_LIMITED', undefined, rateHeaders(v.states, false));
  return rateHeaders(v.states, true);
}

export class RateLimits {
  constructor(
    private readonly config: Limits,
    readonly limiter: Limiter,
  ) {}

  /** The `before` hook: throws RATE_LIMITED (429) with Retry-After and X-RateLimit-* headers; on success returns the X-RateLimit-* headers for the reply. */
  check(req: Req, route: Route): Record<string, string> | Promise<Record<string, string>> | undefined {
    // No limit configured and no tight one for the route: nothing to count, no promise, no address read.
    if (this.config.rateLimitPerMinute <= 0 && this.config.rateLimitPerIpPerMinute <= 0 && !TIGHT[`${route.method} ${route.path}`]) return undefined;
    const buckets = bucketsFor(this.config, route, req.principal, clientIp(req, this.config.trustProxy));
    if (buckets.length === 0) return undefined;
    const v = this.limiter.hit(buckets);
    return v instanceof Promise ? v.then(verdict) : verdict(v);
  }

  close(): void {
    this.limiter.close();
  }
}
