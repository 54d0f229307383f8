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
  /** Slack of the silence judged (a channel is closed after window − checkMs of it), and the presence refresh's period, ms. */
  private readonly checkMs: number;
  private readonly refreshMs: number;
  /** How often the sweep runs: half the slack, so a close comes at least checkMs / 2 before the window ends. */
  private readonly sweepMs: number;
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
    // A channel silent for the window less checkMs (a tenth of it, 250 ms to 1 s) is closed at the
    // next sweep, and sweeps come every checkMs / 2: a host that falls silent is closed between
    // window − checkMs and window − checkMs / 2 after its last frame, whatever the phase, leaving at
    // least checkMs / 2 for a late timer and the presence removal to reach every node within the
    // window (sweeping every checkMs closed the unluckiest phase at the window's very end, and under
    // a loaded event loop the host read offline elsewhere after it). Presence in the store is
    // extended only every third of the window (its TTL is the whole window).
    this.checkMs = Math.min(1000, Math.max(250, Math.floor(heartbeatTimeoutMs / 10)));
    this.sweepMs = Math.floor(this.checkMs / 2);
    this.refreshMs = Math.max(250, Math.floor(heartbeatTimeoutMs / 3));
    this.timer = setInterval(() => this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  /** Closes silent channels, extends presence of the live ones (every refreshMs), drops stale forwards. */
  private sweep(): void {
    const now = Date.now();
    // Closed once silent for the window less one check period: the check that sees it comes before the window ends.
    const limit = now - (this.heartbeatTimeoutMs - this.checkMs);
    const refresh = now - this.lastRefresh >= this.refreshMs - this.sweepMs / 2;
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
