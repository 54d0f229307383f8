// The limiter shared by every hub node: counts live in Redis, and one Lua
// script checks and counts all of a request's buckets atomically in a single
// round trip (same rules as MemoryLimiter).
//
// A node takes a bucket's allowance from Redis a few requests at a time (a
// lease: a fiftieth of the limit, at least one) and spends it in process, so
// most requests are counted without a round trip and answered synchronously.
// Redis still counts every request any node may admit, so the nodes together
// never admit more than the limit; the cost is the other way round: what one
// node leased and has not spent (under a fiftieth of the limit per node) is
// refused on the others until the window ends. A bucket Redis reports full
// is refused here, without asking again, until its window ends.
import type { Redis } from 'ioredis';
import { MemoryLimiter, type Bucket, type BucketState, type Limiter, type Verdict } from './limiter.js';
import type { Logger } from '../log.js';

// KEYS: one per bucket. ARGV: limit, windowMs, wanted for each bucket in turn.
// Allowed when every bucket has room for one more; then each takes what it
// wants, at most up to its limit. Returns count, pttl, taken for each bucket,
// then 1 when allowed (0 refused: nothing taken).
const SCRIPT = `
local n = #KEYS
local allowed = 1
local counts = {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[3 * i - 2]) then allowed = 0 end
end
local out = {}
for i = 1, n do
  local limit = tonumber(ARGV[3 * i - 2])
  local win = tonumber(ARGV[3 * i - 1])
  local take = 0
  if allowed == 1 then
    take = math.min(tonumber(ARGV[3 * i]), limit - counts[i])
    counts[i] = redis.call('INCRBY', KEYS[i], take)
  end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then
    if allowed == 1 then redis.call('PEXPIRE', KEYS[i], win) end
    ttl = win
  end
  out[3 * i - 2] = counts[i]
  out[3 * i - 1] = ttl
  out[3 * i] = take
end
out[3 * n + 1] = allowed
return out
`;

type WithScript = Redis & { hubRateLimitLease(numKeys: number, ...args: Array<string | number>): Promise<number[]> };

/** This node's share of a bucket's window. */
interface Lease {
  /** Requests Redis counted for this node in the window, and how many of them it admitted. */
  granted: number;
  used: number;
  /** The bucket's count in Redis when last heard (everything every node took). */
  seen: number;
  /** Unix ms the window closes, taken from the request's send time: the lease never outlives Redis's window. */
  resetAt: number;
}

/** A lease is a fiftieth of the limit: small limits (phone codes, model tests) are counted one by one. */
export const leaseSize = (limit: number) => Math.max(1, Math.floor(limit / 50));
/** Buckets with a lease held at once; past it, requests take one at a time (exact, no memory). */
const MAX_LEASES = 100_000;

export class RedisLimiter implements Limiter {
  readonly kind = 'redis' as const;
  private readonly redis: WithScript;
  private readonly leases = new Map<string, Lease>();
  private readonly sweeper: NodeJS.Timeout;
  /** Counts while Redis is away: each node holds the limits on its own (at most the nodes' number times them). */
  private readonly local = new MemoryLimiter();
  private lastWarn = 0;

  constructor(
    redis: Redis,
    private readonly keyOf: (k: string) => string,
    private readonly log?: Logger,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL once when Redis has not cached the script.
    if (!(redis as unknown as Partial<WithScript>).hubRateLimitLease) redis.defineCommand('hubRateLimitLease', { lua: SCRIPT });
    this.redis = redis as WithScript;
    // Closed windows' leases go, so idle keys and addresses do not accumulate.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [k, l] of this.leases) if (l.resetAt <= now) this.leases.delete(k);
    }, 60_000);
    this.sweeper.unref();
  }

  hit(buckets: Bucket[]): Verdict | Promise<Verdict> {
    if (buckets.length === 0) return { allowed: true, states: [] };
    const now = Date.now();
    const leases = buckets.map((b) => {
      const l = this.leases.get(b.key);
      return l && l.resetAt > now ? l : undefined;
    });
    // Full in Redis and nothing left here: refused until the window ends, without a round trip.
    if (leases.some((l, i) => l && l.used >= l.granted && l.seen >= buckets[i].limit)) return this.verdict(false, buckets, leases, now);
    if (leases.every((l) => l && l.used < l.granted)) {
      for (const l of leases) l!.used++;
      return this.verdict(true, buckets, leases, now);
    }
    // While Redis is away each node counts on its own: refusing every request would turn a Redis outage
    // into a full outage, and admitting every one would lift the limits (sign-in attempts, SMS codes).
    if (this.redis.status !== 'ready') return this.alone(buckets, 'redis not ready');
    // What this node holds is spent now (given back if Redis refuses); the rest is asked for.
    const held = leases.map((l) => (l && l.used < l.granted ? (l.used++, l) : undefined));
    return this.ask(buckets, held, now);
  }

  close(): void {
    // The connection belongs to the bus.
    clearInterval(this.sweeper);
    this.leases.clear();
    this.local.close();
  }

  private async ask(buckets: Bucket[], held: Array<Lease | undefined>, sent: number): Promise<Verdict> {
    const need = buckets.flatMap((b, i) => (held[i] ? [] : [b]));
    const args: Array<string | number> = need.map((b) => this.keyOf(b.key));
    const room = this.leases.size < MAX_LEASES;
    for (const b of need) args.push(b.limit, b.windowMs, room ? leaseSize(b.limit) : 1);
    let out: number[];
    try {
      out = await this.redis.hubRateLimitLease(need.length, ...args);
    } catch (e) {
      for (const l of held) if (l) l.used--;
      return this.alone(buckets, e instanceof Error ? e.message : String(e));
    }
    const allowed = out[3 * need.length] === 1;
    const got = new Map<Bucket, Lease>();
    need.forEach((b, j) => {
      const count = Number(out[3 * j]);
      const resetAt = sent + Number(out[3 * j + 1]);
      const taken = Number(out[3 * j + 2]);
      let l = this.leases.get(b.key);
      if (!l || l.resetAt <= sent) l = { granted: 0, used: 0, seen: 0, resetAt };
      l.granted += taken;
      l.seen = Math.max(l.seen, count);
      if (allowed) l.used++;
      // Kept when it holds something to spend or says the bucket is full; a one-off take is not.
      if (room && (l.used < l.granted || l.seen >= b.limit)) this.leases.set(b.key, l);
      got.set(b, l);
    });
    const leases = buckets.map((b, i) => held[i] ?? got.get(b)!);
    if (allowed) return this.verdict(true, buckets, leases, Date.now());
    // Refused in Redis, but a concurrent ask may have leased this node the window's last requests
    // meanwhile: spend those rather than refuse while holding them.
    if (need.every((b) => got.get(b)!.used < got.get(b)!.granted)) {
      for (const b of need) got.get(b)!.used++;
      return this.verdict(true, buckets, leases, Date.now());
    }
    for (const l of held) if (l) l.used--;
    // A refusal reports Redis's counts for the buckets it asked about: the refusing one reads full.
    const v = this.verdict(false, buckets, leases, Date.now());
    need.forEach((b, j) => {
      const st = v.states[buckets.indexOf(b)];
      st.count = Math.max(st.count, Number(out[3 * j]));
    });
    return v;
  }

  /** The states as the headers want them: the count Redis holds less what this node has not spent. */
  private verdict(allowed: boolean, buckets: Bucket[], leases: Array<Lease | undefined>, now: number): Verdict {
    const states: BucketState[] = buckets.map((bucket, i) => {
      const l = leases[i];
      return l ? { bucket, count: l.seen - (l.granted - l.used), resetMs: Math.max(0, l.resetAt - now) } : { bucket, count: 0, resetMs: bucket.windowMs };
    });
    return { allowed, states };
  }

  private alone(buckets: Bucket[], why: string): Verdict {
    const now = Date.now();
    if (now - this.lastWarn > 10_000) {
      this.lastWarn = now;
      this.log?.warn('rate limits counted on this node alone: redis unavailable', { err: why });
    }
    return this.local.hit(buckets);
  }
}
