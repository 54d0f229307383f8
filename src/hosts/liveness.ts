// The liveness sweep of this node's host channels: one timer judges them all
// (connections hold none). It closes channels silent for the heartbeat window
// and sockets too slow to say hello, extends the presence of the live ones and
// records when they were last seen. Split from gateway-impl.ts.
import { CloseCodes } from '../../host-protocol/version.js';
import type { HostConnection } from './connection.js';
import type { PresenceUpkeep } from './presence-upkeep.js';
import type { HostStore } from './store.js';

/** How often lastSeenAt of a live channel reaches the database. */
const PERSIST_SEEN_MS = 60_000;

export class LivenessSweep {
  private readonly timer: NodeJS.Timeout;
  /** Slack of the silence judged (a channel is closed after window − checkMs of it), and the forwards' staleness period, ms. */
  private readonly checkMs: number;
  private readonly refreshMs: number;
  /** How often the sweep runs: half the slack, so a close comes at least checkMs / 2 before the window ends. */
  private readonly sweepMs: number;
  /** Sweeps per presence extension of a host: each sweep extends one slice of the held hosts. */
  private readonly slices: number;
  /** Sweeps per last-seen write of a host: each sweep writes one slice of the held hosts. */
  private readonly persistSlices: number;
  private sweeps = 0;
  private assigned = 0;
  private lastRefresh = 0;

  constructor(
    /** Silence after which a channel is closed and the host reads offline. */
    private readonly heartbeatTimeoutMs: number,
    /** Lifetime of a held host's presence entry unless extended (gateway-impl.ts, presenceTtlOf). */
    presenceTtlMs: number,
    /** Channels that said hello, by host id; and open sockets that have not said it yet. */
    private readonly held: ReadonlyMap<string, HostConnection>,
    private readonly waiting: Iterable<HostConnection>,
    private readonly upkeep: PresenceUpkeep,
    private readonly store: HostStore,
    /** Called every third of the heartbeat window, with its time (the gateway drops stale forwards). */
    private readonly onRefresh: (now: number) => void,
  ) {
    // A channel silent for the window less checkMs (a tenth of it, 250 ms to 1 s) is closed at the
    // next sweep, and sweeps come every checkMs / 2: a host that falls silent is closed between
    // window − checkMs and window − checkMs / 2 after its last frame, whatever the phase, leaving at
    // least checkMs / 2 for a late timer and the presence removal to reach every node within the
    // window (sweeping every checkMs closed the unluckiest phase at the window's very end, and under
    // a loaded event loop the host read offline elsewhere after it).
    this.checkMs = Math.min(1000, Math.max(250, Math.floor(heartbeatTimeoutMs / 10)));
    this.sweepMs = Math.floor(this.checkMs / 2);
    this.refreshMs = Math.max(250, Math.floor(heartbeatTimeoutMs / 3));
    // Presence entries are extended every third of their TTL, a slice of the hosts at each sweep: a
    // steady trickle of small script calls rather than every host at once (a connect storm's hosts
    // would otherwise all fall due in the same sweep, each period).
    this.slices = Math.max(1, Math.round(presenceTtlMs / 3 / this.sweepMs));
    // Last-seen times likewise, a slice at each sweep: every held host in one write once a minute was
    // a burst of PostgreSQL work (every node's at once when they started together) that the pings and
    // messages of that second waited behind (bench/RESULTS.md, thirty-sixth session).
    this.persistSlices = Math.max(1, Math.round(PERSIST_SEEN_MS / this.sweepMs));
    this.timer = setInterval(() => this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  /**
   * Closes silent channels, extends presence of this sweep's slice of the live ones and writes the
   * last-seen times of its last-seen slice, drops stale forwards.
   */
  private sweep(): void {
    const now = Date.now();
    // Closed once silent for the window less one check period: the check that sees it comes before the window ends.
    const limit = now - (this.heartbeatTimeoutMs - this.checkMs);
    const slice = this.sweeps % this.slices;
    const persistSlice = this.sweeps % this.persistSlices;
    this.sweeps++;
    const live: string[] = [];
    const seen: string[] = [];
    for (const conn of this.held.values()) {
      if (conn.lastSeen <= limit) conn.close(CloseCodes.HEARTBEAT);
      else {
        // Slices dealt in arrival order: hosts that connected together fall in different sweeps.
        if (conn.sweepOrder < 0) conn.sweepOrder = this.assigned++;
        if (conn.sweepOrder % this.slices === slice) live.push(conn.hostId);
        if (conn.sweepOrder % this.persistSlices === persistSlice) seen.push(conn.hostId);
      }
    }
    for (const conn of this.waiting) if (conn.lastSeen <= limit) conn.close(CloseCodes.HELLO_TIMEOUT);
    if (live.length) void this.upkeep.refresh(live).catch(() => undefined);
    if (seen.length) this.store.touchMany(seen, now);
    if (now - this.lastRefresh < this.refreshMs - this.sweepMs / 2) return;
    this.lastRefresh = now;
    this.onRefresh(now);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
