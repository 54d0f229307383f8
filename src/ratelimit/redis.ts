// The limiter shared by every hub node: counts live in Redis, and one Lua
// script checks and increments all of a request's buckets atomically in a
// single round trip (same rules as MemoryLimiter).
import type { Redis } from 'ioredis';
import type { Bucket, Limiter, Verdict } from './limiter.js';
import type { Logger } from '../log.js';

// KEYS: one per bucket. ARGV: limit, windowMs for each bucket in turn.
// Returns count, pttl for each bucket, then 1 when allowed (0 refused).
const SCRIPT = `
local n = #KEYS
local allowed = 1
local counts = {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[2 * i - 1]) then allowed = 0 end
end
local out = {}
for i = 1, n do
  local win = tonumber(ARGV[2 * i])
  if allowed == 1 then counts[i] = redis.call('INCR', KEYS[i]) end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then
    if allowed == 1 then redis.call('PEXPIRE', KEYS[i], win) end
    ttl = win
  end
  out[2 * i - 1] = counts[i]
  out[2 * i] = ttl
end
out[2 * n + 1] = allowed
return out
`;

type WithScript = Redis & { hubRateLimit(numKeys: number, ...args: Array<string | number>): Promise<number[]> };

export class RedisLimiter implements Limiter {
  readonly kind = 'redis' as const;
  private readonly redis: WithScript;
  private lastWarn = 0;

  constructor(
    redis: Redis,
    private readonly keyOf: (k: string) => string,
    private readonly log?: Logger,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL once when Redis has not cached the script.
    if (!(redis as unknown as Partial<WithScript>).hubRateLimit) redis.defineCommand('hubRateLimit', { lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  async hit(buckets: Bucket[]): Promise<Verdict> {
    if (buckets.length === 0) return { allowed: true, states: [] };
    // Fail open while Redis is away: refusing every request would turn a
    // Redis outage into a full outage; the limit is protection, not billing.
    if (this.redis.status !== 'ready') return this.open(buckets, 'redis not ready');
    const args: Array<string | number> = buckets.map((b) => this.keyOf(b.key));
    for (const b of buckets) args.push(b.limit, b.windowMs);
    let out: number[];
    try {
      out = await this.redis.hubRateLimit(buckets.length, ...args);
    } catch (e) {
      return this.open(buckets, e instanceof Error ? e.message : String(e));
    }
    return {
      allowed: out[2 * buckets.length] === 1,
      states: buckets.map((b, i) => ({ bucket: b, count: Number(out[2 * i]), resetMs: Number(out[2 * i + 1]) })),
    };
  }

  close(): void {
    // The connection belongs to the bus.
  }

  private open(buckets: Bucket[], why: string): Verdict {
    const now = Date.now();
    if (now - this.lastWarn > 10_000) {
      this.lastWarn = now;
      this.log?.warn('rate limits not enforced: redis unavailable', { err: why });
    }
    return { allowed: true, states: buckets.map((b) => ({ bucket: b, count: 0, resetMs: b.windowMs })) };
  }
}
