// Amounts spent per key within one fixed window on this node, cleared whole when the window ends:
// O(1) a take, nothing kept past a window, no timer. What a budget that only guards this node's own
// work needs (sockets a host opens here, bytes of replays this node publishes); budgets shared by
// the nodes go through the Limiter (limiter.ts).

export class WindowCounter {
  private spent = new Map<string, number>();
  private windowEnds = 0;

  constructor(
    /** What one key may spend per window. */
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /**
   * Spends `amount` for `key` when it fits: true, counted; false, nothing counted. A key that spent
   * nothing yet in this window always gets its first amount, however large (one replay bigger than
   * the budget still goes once).
   */
  take(key: string, amount = 1, now = Date.now()): boolean {
    if (now >= this.windowEnds) {
      this.spent = new Map();
      this.windowEnds = now + this.windowMs;
    }
    const spent = this.spent.get(key) ?? 0;
    if (spent > 0 && spent + amount > this.limit) return false;
    this.spent.set(key, spent + amount);
    return true;
  }

  /** Milliseconds until the current window ends (what a refused caller waits at most). */
  msLeft(now = Date.now()): number {
    return Math.max(0, this.windowEnds - now);
  }
}
