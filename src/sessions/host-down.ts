// The host-down pass: a host's channel closed, so its runs cannot finish and
// end HOST_DISCONNECTED, unless the host came back meanwhile. Split from
// scheduler.ts, which keeps dispatch, drains and the sweeps.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { HostGateway } from '../hosts/gateway.js';
import type { Logger } from '../log.js';
import type { RunTracker } from './runs.js';
import { pooled } from '../db/pooled.js';
import type { Em } from './sql.js';

/** What ending the runs of hosts that went away needs (here and in lost-runs.ts). */
export interface GoneHostDeps {
  em(): Em;
  /** For the lookups by lists of hosts, outside any transaction (db/pooled.ts). */
  orm: MikroORM;
  gateway: HostGateway;
  runs(): RunTracker;
  log: Logger;
  /** At most this many hosts (runs, for the lost-run sweep) are looked at per query. */
  batch: number;
}

export class HostDownPass {
  /** Hosts whose channel closed, not yet looked at; and whether a pass over them is running. */
  private downHosts = new Set<string>();
  private downPass = false;

  constructor(
    private readonly d: GoneHostDeps,
    /** True once the scheduler closed or this node is shutting down. */
    private readonly halted: () => boolean,
  ) {}

  /**
   * The host's channel closed: its runs cannot finish. The hosts that close while a pass runs are
   * looked at together by the next one (one query per `d.batch` hosts): a node that drops thousands
   * of channels at once (its hosts' network, a CPU stall) must not take one pool connection per host.
   */
  hostDown(hostId: string): void {
    if (this.halted()) return; // this node is shutting down: the host reconnects elsewhere and reports its runs
    this.downHosts.add(hostId);
    this.startDownPass();
  }

  private startDownPass(): void {
    if (this.downPass || !this.downHosts.size) return;
    this.downPass = true;
    setImmediate(() => void this.hostsDown().finally(() => {
      this.downPass = false;
      if (!this.halted()) this.startDownPass(); // hosts that closed as the pass ended
    }));
  }

  private async hostsDown(): Promise<void> {
    while (this.downHosts.size && !this.halted()) {
      const ids = [...this.downHosts].slice(0, this.d.batch);
      for (const id of ids) this.downHosts.delete(id);
      try {
        const lost = await pooled<{ id: string; host_id: string; session_id: string; agent_id: string; engine: string }>(this.d.orm,
          `select id, host_id, session_id, agent_id, engine from session_tasks
            where host_id = any(?::text[]) and status in ('running', 'aborted') and ended_at is null`, [ids]);
        // A host back on a channel (here or elsewhere) since it closed: its hello reconciles its runs (Scheduler.hostsUp).
        const back = lost.length ? await this.d.gateway.connected([...new Set(lost.map((t) => t.host_id))]) : new Set<string>();
        for (const t of lost) {
          if (back.has(t.host_id)) continue;
          await this.d.runs().end(t.id, { ok: false, error: { code: 'HOST_DISCONNECTED', message: 'the host disconnected during the run' } },
            { sessionId: t.session_id, hostId: t.host_id, agentId: t.agent_id, engine: t.engine });
        }
      } catch (e) {
        // The lost-run sweep (lost-runs.ts) ends these runs once the hosts have been offline for the window.
        this.d.log.error('host down handling failed', { hosts: ids.length, err: e });
      }
    }
    if (this.halted()) this.downHosts.clear(); // their hosts reconnect elsewhere and report their runs
  }
}
