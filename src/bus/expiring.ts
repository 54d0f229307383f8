// An in-process cache whose entries are trusted for a bounded time. Caches
// kept true by Bus invalidations use it so that an invalidation lost in a
// Redis outage stops mattering after the TTL; negative caches (credentials
// known to be bad) use it so a flood of one forged key costs one lookup.
// Bounded in entries: at the cap the oldest entry goes first. Expired entries
// go as new ones come (a few per set) and whenever the owner prunes: a storm
// of thousands of credentials must not stay in memory once it cannot be used.
/** Expired entries dropped by each set, at most: the map sheds its stale entries as fast as it takes new ones. */
const PRUNE_PER_SET = 2;

export class ExpiringMap<K, V> {
  private m = new Map<K, { v: V; at: number }>();

  /** `ttlMs` is read on every get, so a configuration change applies at once. */
  constructor(
    private readonly ttlMs: () => number,
    private readonly max: number,
  ) {}

  get(k: K): V | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (Date.now() - e.at >= this.ttlMs()) {
      this.m.delete(k);
      return undefined;
    }
    return e.v;
  }

  set(k: K, v: V): void {
    this.prune(PRUNE_PER_SET);
    // Re-inserting moves the key to the end: insertion order is age order.
    if (!this.m.delete(k) && this.m.size >= this.max) this.m.delete(this.m.keys().next().value as K);
    this.m.set(k, { v, at: Date.now() });
  }

  /** Drops expired entries, oldest first, `max` at most; answers how many went. */
  prune(max = Infinity): number {
    const before = Date.now() - this.ttlMs();
    let n = 0;
    // Insertion order is age order (set re-inserts): the first entry still fresh ends the sweep.
    for (const [k, e] of this.m) {
      if (n >= max || e.at > before) break;
      this.m.delete(k);
      n++;
    }
    return n;
  }

  delete(k: K): void {
    this.m.delete(k);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(pred: (v: V) => boolean): void {
    for (const [k, e] of this.m) if (pred(e.v)) this.m.delete(k);
  }

  clear(): void {
    this.m.clear();
  }

  get size(): number {
    return this.m.size;
  }
}
