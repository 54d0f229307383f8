// An in-process cache whose entries are trusted for a bounded time. Caches
// kept true by Bus invalidations use it so that an invalidation lost in a
// Redis outage stops mattering after the TTL; negative caches (credentials
// known to be bad) use it so a flood of one forged key costs one lookup.
// Bounded in entries: at the cap the oldest entry goes first.
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
    // Re-inserting moves the key to the end: insertion order is age order.
    if (!this.m.delete(k) && this.m.size >= this.max) this.m.delete(this.m.keys().next().value as K);
    this.m.set(k, { v, at: Date.now() });
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
