// The lost-run sweep: runs left `running` on a host that has had no presence
// for the heartbeat window end HOST_DISCONNECTED. Split from scheduler.ts,
// which starts it and closes it with itself.
import type { GoneHostDeps } from './host-down.js';
import { rows } from './sql.js';

export class LostRunSweep {
  /** Hosts seen without presence by the sweep, and since when (this node's clock). */
  private offlineSince = new Map<string, number>();
  private sweepTimer?: NodeJS.Timeout;

  constructor(
    private readonly d: GoneHostDeps,
    /** True once the scheduler closed: no pass is planned any more. */
    private readonly closed: () => boolean,
    /** True once this node is shutting down: its hosts go elsewhere with their runs. */
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Starts the lost-run sweep now and every half window: runs left `running` on a host that has had
   * no presence for `windowMs` (the heartbeat window) end with HOST_DISCONNECTED. It catches runs of
   * a node that died without anyone seeing its hosts disconnect; every surviving node may sweep, and
   * a run's end is written once (hub_end_runs, end-function.ts, skips a run whose `ended_at` is set, under the session lock).
   */
  start(windowMs: number): void {
    const tick = () => {
      if (this.closed()) return;
      this.sweep(windowMs)
        .catch((e) => this.d.log.error('lost-run sweep failed', { err: e }))
        .finally(() => {
          if (!this.closed()) (this.sweepTimer = setTimeout(tick, Math.max(500, Math.floor(windowMs / 2)))).unref?.();
        });
    };
    tick();
  }

  /** One bounded pass of the sweep; returns how many runs it ended. */
  async sweep(windowMs: number): Promise<number> {
    if (this.closed() || this.stopping()) return 0;
    const open = await rows<{ id: string; host_id: string; session_id: string; agent_id: string; engine: string }>(this.d.em(),
      `select id, host_id, session_id, agent_id, engine from session_tasks
        where status = 'running' and started_at < now() - make_interval(secs => ?) order by started_at limit ${this.d.batch}`, [windowMs / 1000]);
    const hosts = [...new Set(open.map((t) => t.host_id))];
    const now = Date.now();
    for (const h of this.offlineSince.keys()) if (!hosts.includes(h)) this.offlineSince.delete(h);
    if (!hosts.length) return 0;
    const presence = await this.d.gateway.presenceMany(hosts);
    const lost = new Set<string>();
    for (const h of hosts) {
      const p = presence.get(h);
      if (p && p.status !== 'offline') {
        this.offlineSince.delete(h);
        continue;
      }
      let since = this.offlineSince.get(h) ?? now;
      if (p?.lastSeenAt && p.lastSeenAt < since) since = p.lastSeenAt;
      this.offlineSince.set(h, since);
      if (now - since >= windowMs) lost.add(h);
    }
    let ended = 0;
    for (const t of open) {
      if (!lost.has(t.host_id) || this.closed() || this.stopping()) continue;
      await this.d.runs().end(t.id, { ok: false, error: { code: 'HOST_DISCONNECTED', message: 'the host has been gone longer than the heartbeat window' } },
        { sessionId: t.session_id, hostId: t.host_id, agentId: t.agent_id, engine: t.engine });
      ended++;
    }
    return ended;
  }

  close(): void {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
  }
}
