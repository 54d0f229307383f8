// The liveness sweep of this node's host channels: one timer judges them all
// (connections hold none). It closes channels silent for the heartbeat window
// and sockets too slow to say hello, extends the presence of the live ones and
// records when they were last seen. Split from gateway-impl.ts.
import { CloseCodes } from '../../host-protocol/version.js';
import type { HostConnection } from './connection.js';
import type { PresenceUpkeep } from './presence-upkeep.js';
import type { HostStore } from './store.js';

/** How often lastSeenAt of live channels reaches the database. */
const PERSIST_SEEN_MS = 60_000;

export class LivenessSweep {
  private readonly timer: NodeJS.Timeout;
  /** Period of the liveness check, and of the (costlier) presence refresh, ms. */
  private readonly checkMs: number;
  private readonly refreshMs: number;
  private lastRefresh = 0;
  private lastPersist = Date.now();

  constructor(
    /** Silence after which a channel is closed and the host reads offline. */
    private readonly heartbeatTimeoutMs: number,
    /** Channels that said hello, by host id; and open sockets that have not said it yet. */
    private readonly held: ReadonlyMap<string, HostConnection>,
    private readonly waiting: ReadonlySet<HostConnection>,
    private readonly upkeep: PresenceUpkeep,
    private readonly store: HostStore,
    /** Called on every presence refresh, with its time (the gateway drops stale forwards). */
    private readonly onRefresh: (now: number) => void,
  ) {
    // Silence is judged often (a tenth of the window, 250 ms to 1 s) so that a host that falls silent
    // reads offline within the window of its last frame, not up to a sweep period after it; presence
    // in the store is extended only every third of the window (its TTL is the whole window).
    this.checkMs = Math.min(1000, Math.max(250, Math.floor(heartbeatTimeoutMs / 10)));
    this.refreshMs = Math.max(250, Math.floor(heartbeatTimeoutMs / 3));
    this.timer = setInterval(() => this.sweep(), this.checkMs);
    this.timer.unref();
  }

  /** Closes silent channels, extends presence of the live ones (every refreshMs), drops stale forwards. */
  private sweep(): void {
    const now = Date.now();
    // Closed once silent for the window less one check period: the check that sees it comes before the window ends.
    const limit = now - (this.heartbeatTimeoutMs - this.checkMs);
    const refresh = now - this.lastRefresh >= this.refreshMs - this.checkMs / 2;
    const live: string[] = [];
    for (const conn of this.held.values()) {
      if (conn.lastSeen <= limit) conn.close(CloseCodes.HEARTBEAT);
      else if (refresh) live.push(conn.hostId);
    }
    for (const conn of this.waiting) if (conn.lastSeen <= limit) conn.close(CloseCodes.HELLO_TIMEOUT);
    if (!refresh) return;
    this.lastRefresh = now;
    if (live.length) void this.upkeep.refresh(live, now).catch(() => undefined);
    if (now - this.lastPersist >= PERSIST_SEEN_MS) {
      this.lastPersist = now;
      this.store.touchMany(live, now);
    }
    this.onRefresh(now);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
