// Keeps the presence of the hosts whose channel this node holds alive in the
// presence store: extended on every sweep, and written again at once when the
// bus reconnects (Redis restarted, perhaps empty), with backoff until a pass
// goes through. Entries the store had lost are reported: work that waited for
// those hosts may start now.
import type { Presence } from './presence.js';

/** First delay, and the longest, before a presence rebuild that failed is tried again. */
const REBUILD_RETRY_MS = 250;
const REBUILD_RETRY_MAX_MS = 5000;

export class PresenceUpkeep {
  private restoredHandlers: Array<(hostIds: string[]) => void> = [];
  private rebuilding = false;
  private rebuildAgain = false;

  constructor(
    private readonly presenceStore: Presence,
    private readonly node: string,
    /** How long an entry lives without being extended (gateway-impl.ts, presenceTtlOf). */
    private readonly ttlMs: number,
    /** Hosts whose channel this node holds. */
    private readonly held: () => string[],
    /** True once the node closes: a rebuild stops retrying. */
    private readonly closing: () => boolean,
    /** Calls a domain's handler, logging what it throws. */
    private readonly safe: (fn: () => void) => void,
  ) {}

  onRestored(handler: (hostIds: string[]) => void): void {
    this.restoredHandlers.push(handler);
  }

  /** Extends the presence of these hosts; entries the store lost are written again and reported. */
  async refresh(hostIds: string[]): Promise<boolean> {
    const { restored, ok } = await this.presenceStore.refresh(hostIds, this.node, this.ttlMs);
    if (restored.length) for (const h of this.restoredHandlers) this.safe(() => h(restored));
    return ok;
  }

  /**
   * Publishes may have been lost (the bus reconnected: Redis restarted, perhaps empty): presence of
   * this node's hosts is written again now rather than at the next sweep (a third of the heartbeat
   * window away), and tried again with backoff until a pass goes through.
   */
  async rebuild(): Promise<void> {
    if (this.rebuilding) return void (this.rebuildAgain = true);
    this.rebuilding = true;
    try {
      for (let attempt = 0; !this.closing(); attempt++) {
        this.rebuildAgain = false;
        const live = this.held();
        const ok = !live.length || (await this.refresh(live).catch(() => false));
        if (ok && !this.rebuildAgain) return;
        if (!ok) await new Promise((r) => setTimeout(r, Math.min(REBUILD_RETRY_MAX_MS, REBUILD_RETRY_MS * 2 ** Math.min(attempt, 10))).unref?.());
      }
    } finally {
      this.rebuilding = false;
    }
  }
}
