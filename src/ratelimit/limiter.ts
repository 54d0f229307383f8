// Counting requests in fixed windows. A window opens at a bucket's first
// hit and lasts windowMs. A request counts against every bucket it falls in,
// and only when it is allowed by all of them: a refused request uses up
// nothing, so a client that backs off is not punished for the refusals.
export interface Bucket {
  key: string;
  limit: number;
  windowMs: number;
}

export interface BucketState {
  bucket: Bucket;
  /** Requests counted in the current window, this one included when allowed. */
  count: number;
  /** Milliseconds until the window closes. */
  resetMs: number;
}

export interface Verdict {
  allowed: boolean;
  states: BucketState[];
}

export interface Limiter {
  readonly kind: 'memory' | 'redis';
  /** Checks and (when allowed) counts one request against all buckets, atomically (in process: synchronously, no promise per request). */
  hit(buckets: Bucket[]): Verdict | Promise<Verdict>;
  close(): void;
}

/** The in-process limiter, for a single node (no Redis). */
export class MemoryLimiter implements Limiter {
  readonly kind = 'memory' as const;
  private windows = new Map<string, { count: number; resetAt: number }>();
  private sweeper: NodeJS.Timeout;

  constructor(sweepMs = 60_000) {
    // Drop closed windows so idle keys and IPs do not accumulate.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    }, sweepMs);
    this.sweeper.unref();
  }

  hit(buckets: Bucket[]): Verdict {
    const now = Date.now();
    const open = buckets.map((b) => {
      let w = this.windows.get(b.key);
      if (!w || w.resetAt <= now) w = { count: 0, resetAt: now + b.windowMs };
      return w;
    });
    const allowed = buckets.every((b, i) => open[i].count < b.limit);
    const states = buckets.map((b, i) => {
      const w = open[i];
      if (allowed) {
        w.count++;
        this.windows.set(b.key, w);
      }
      return { bucket: b, count: w.count, resetMs: w.resetAt - now };
    });
    return { allowed, states };
  }

  close(): void {
    clearInterval(this.sweeper);
    this.windows.clear();
  }
}
