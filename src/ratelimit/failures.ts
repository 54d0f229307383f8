// A budget of failed credential checks per client IP (API keys, login
// tokens, host credentials; HTTP and the host WebSocket upgrade). Counted in
// the shared limiter (Redis when there is one, else in process); once an IP
// has spent its budget, this node answers it 429 before looking at any
// credential, so a flood of random keys costs no lookup at all.
import type { Config } from '../config.js';
import { fail, HubError } from '../errors.js';
import type { Req } from '../server/http.js';
import type { Limiter } from './limiter.js';
import { clientIp } from './policy.js';

/** Where a request came from: the socket's address and the headers (X-Forwarded-For behind a trusted proxy). */
export type Origin = Pick<Req, 'ip' | 'headers'>;

const WINDOW_MS = 60_000;
const BLOCKED_MAX = 100_000;

export class FailedAuth {
  /** ip → when its window closes (ms since epoch), for IPs that spent their budget. */
  private blocked = new Map<string, number>();

  constructor(
    private readonly limiter: Limiter,
    private readonly config: Pick<Config, 'authFailuresPerIpPerMinute' | 'trustProxy'>,
  ) {}

  /** The client IP the budget is counted against. */
  ipOf(from: Origin): string {
    return clientIp(from, this.config.trustProxy);
  }

  /** How many addresses are refused now without a check (their budget is spent). */
  get blockedAddresses(): number {
    return this.blocked.size;
  }

  /** Seconds until `ip` may present credentials again; 0 when it may now. No I/O. */
  retryAfter(ip: string): number {
    const until = this.blocked.get(ip);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) {
      this.blocked.delete(ip);
      return 0;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /** Counts one failed check; returns the seconds to send in Retry-After when this one is already over the budget, else 0. */
  async failed(ip: string): Promise<number> {
    const limit = this.config.authFailuresPerIpPerMinute;
    if (limit <= 0) return 0;
    const v = await this.limiter.hit([{ key: `rl:authfail:${ip}`, limit, windowMs: WINDOW_MS }]);
    const s = v.states[0];
    if (v.allowed && s.count < limit) return 0;
    // The budget is spent: refuse this IP here without checking until the window closes.
    if (!this.blocked.delete(ip) && this.blocked.size >= BLOCKED_MAX) this.blocked.delete(this.blocked.keys().next().value as string);
    this.blocked.set(ip, Date.now() + s.resetMs);
    return v.allowed ? 0 : Math.max(1, Math.ceil(s.resetMs / 1000));
  }

  /** Runs a credential check for `ip`: refused with 429 when the IP is over its budget; an UNAUTHENTICATED it throws is counted. */
  // Synchronous when `check` is (a cached API key): no promise on the hot path. The client's address
  // is read only when some IP is blocked or a check failed (reading it costs on every request).
  guard<T>(from: Origin, check: () => T | Promise<T>): T | Promise<T> {
    if (this.blocked.size > 0) {
      const wait = this.retryAfter(this.ipOf(from));
      if (wait) throw tooManyFailures(wait);
    }
    let out: T | Promise<T>;
    try {
      out = check();
    } catch (e) {
      return this.refused(this.ipOf(from), e);
    }
    if (!(out instanceof Promise)) return out;
    // The address is read now, while the request is surely open: a client that leaves before a slow
    // check fails is still counted against its own address.
    const ip = this.ipOf(from);
    return out.catch((e: unknown) => this.refused(ip, e));
  }

  private async refused(ip: string, e: unknown): Promise<never> {
    // An expired login token is a real one that aged, not a guess: not counted.
    if (e instanceof HubError && e.kind === 'UNAUTHENTICATED') {
      const over = await this.failed(ip);
      if (over) throw tooManyFailures(over);
    }
    throw e;
  }
}

export function tooManyFailures(retryAfterS: number): HubError {
  return fail('RATE_LIMITED', 'too many failed credential checks from this address; retry later', { 'Retry-After': String(retryAfterS) });
}
