// Starts runs on hosts and keeps the queue moving: dispatches claimed tasks,
// drains a host's queue when a run ends or the host comes up, fails runs
// whose host went away, and keeps the gateway's running count true.
import type { HubContext } from '../context.js';
import type { HostGateway } from '../hosts/gateway.js';
import { claimForHost, type ClaimedTask } from './queue.js';
import { rows, tx, type Em } from './sql.js';
import type { RunTracker } from './runs.js';

/** After a host's hello, how long its buffered run frames get before its unknown runs count as lost. */
export const LOST_RUN_GRACE_MS = 3000;
/** Delay before re-draining a host whose claim skipped a locked session. */
const RETRY_SKIPPED_MS = 50;

export class Scheduler {
  private draining = new Map<string, Promise<void>>();
  private again = new Set<string>();
  private closed = false;

  constructor(
    private readonly ctx: HubContext,
    private readonly gateway: HostGateway,
    private readonly runs: () => RunTracker,
    /** True once this node is shutting down: its hosts go elsewhere with their runs. */
    private readonly stopping: () => boolean,
  ) {
    gateway.onRunFrame((hostId, f) => this.runs().handle(hostId, f));
    gateway.onHostUp((hostId, info) => void this.hostUp(hostId, info.running));
    gateway.onHostDown((hostId) => void this.hostDown(hostId));
  }

  private em(): Em {
    return this.ctx.em() as unknown as Em;
  }

  /** Sends run.start for a claimed task (after the claim committed). */
  async dispatch(t: ClaimedTask): Promise<void> {
    this.runs().started(t);
    try {
      await this.gateway.send(t.hostId, {
        t: 'run.start', runId: t.id, sessionId: t.sessionId, engine: t.engine, prompt: t.prompt, workDir: t.workDir,
        ...(t.resume ? { resume: t.resume } : {}), mode: t.mode, ...(t.effort ? { effort: t.effort } : {}),
      });
    } catch (e) {
      this.ctx.log.warn('dispatch failed', { runId: t.id, hostId: t.hostId, err: (e as Error).message });
      await this.runs().end(t.id, { ok: false, error: { code: 'HOST_OFFLINE', message: 'the host went offline before the run started' } });
    }
    this.countSoon(t.hostId);
  }

  private counting = new Set<string>();
  /** Recounts a host's runs shortly: a burst of dispatches costs one query. */
  private countSoon(hostId: string): void {
    if (this.counting.has(hostId)) return;
    this.counting.add(hostId);
    setTimeout(() => {
      this.counting.delete(hostId);
      if (!this.closed) this.refreshRunning(hostId).catch(() => undefined);
    }, 20).unref?.();
  }

  /** Starts waiting tasks of a host while it has capacity. Calls for one host are serialized and coalesced. */
  drain(hostId: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const cur = this.draining.get(hostId);
    if (cur) {
      this.again.add(hostId);
      return cur;
    }
    const p = (async () => {
      do {
        this.again.delete(hostId);
        await this.drainOnce(hostId);
      } while (this.again.has(hostId) && !this.closed);
    })()
      .catch((e) => this.ctx.log.error('drain failed', { hostId, err: e }))
      .finally(() => this.draining.delete(hostId));
    this.draining.set(hostId, p);
    return p;
  }

  private async drainOnce(hostId: string): Promise<void> {
    const p = await this.gateway.presence(hostId);
    if (p.status === 'offline') return;
    const { tasks, skipped } = await tx(this.em(), (t) => claimForHost(t, hostId, p.capacity));
    for (const t of tasks) await this.dispatch(t);
    if (!tasks.length) this.countSoon(hostId);
    // A session skipped because another transaction held it (a running session is not skipped
    // forever: its run's end drains again) gets another look once that transaction is done.
    if (skipped && !this.closed) setTimeout(() => void this.drain(hostId), RETRY_SKIPPED_MS).unref?.();
  }

  /** Runs the database holds as running on a host → the gateway's count. */
  async refreshRunning(hostId: string): Promise<void> {
    const r = await rows(this.em(), `select count(*) as c from session_tasks where host_id = ? and status = 'running'`, [hostId]);
    this.gateway.setRunning(hostId, Number(r[0].c));
  }

  /** A run ended (committed): capacity freed, the next waiting message may start. */
  ended(hostId: string): void {
    void this.drain(hostId);
  }

  /** Runs the hub thinks are on the host but the host no longer runs are lost; then drain. One query when there is nothing to do. */
  private async hostUp(hostId: string, running: string[]): Promise<void> {
    const helloAt = new Date();
    let open: Array<{ id: string; status: string; session_id: string; agent_id: string; engine: string }>;
    try {
      open = await rows(this.em(),
        `select id, status, session_id, agent_id, engine from session_tasks where host_id = ? and status in ('queued', 'running', 'aborted') and ended_at is null`, [hostId]);
    } catch (e) {
      return this.ctx.log.error('host up handling failed', { hostId, err: e });
    }
    if (open.some((t) => t.status === 'queued')) void this.drain(hostId);
    const still = new Set(running);
    const suspects = open.filter((t) => t.status !== 'queued' && !still.has(t.id));
    if (!suspects.length) return;
    // A run that ended while the host was away is not in `running`, but its frames (kept by the
    // host while disconnected) follow the welcome: judge only what is still open after they had time.
    await new Promise((r) => setTimeout(r, LOST_RUN_GRACE_MS).unref?.());
    if (this.closed || this.stopping()) return;
    try {
      const stillOpen = new Set((await rows<{ id: string }>(this.em(),
        `select id from session_tasks where host_id = ? and status in ('running', 'aborted') and ended_at is null and started_at < ?`, [hostId, helloAt])).map((r) => r.id));
      for (const t of suspects) {
        if (!stillOpen.has(t.id)) continue;
        await this.runs().end(t.id, { ok: false, error: { code: 'HOST_DISCONNECTED', message: 'the host restarted and the run was lost' } },
          { sessionId: t.session_id, hostId, agentId: t.agent_id, engine: t.engine });
      }
    } catch (e) {
      this.ctx.log.error('host up handling failed', { hostId, err: e });
    }
  }

  /** The host's channel closed: its runs cannot finish. */
  private async hostDown(hostId: string): Promise<void> {
    if (this.closed || this.stopping()) return; // this node is shutting down: the host reconnects elsewhere and reports its runs
    try {
      const lost = await rows<{ id: string; session_id: string; agent_id: string; engine: string }>(this.em(),
        `select id, session_id, agent_id, engine from session_tasks where host_id = ? and status in ('running', 'aborted') and ended_at is null`, [hostId]);
      for (const t of lost) {
        await this.runs().end(t.id, { ok: false, error: { code: 'HOST_DISCONNECTED', message: 'the host disconnected during the run' } },
          { sessionId: t.session_id, hostId, agentId: t.agent_id, engine: t.engine });
      }
    } catch (e) {
      this.ctx.log.error('host down handling failed', { hostId, err: e });
    }
  }

  /** Drains every host with waiting work (hub start: hosts that reconnected before this ran). */
  async drainAll(): Promise<void> {
    const hosts = await rows<{ host_id: string }>(this.em(), `select distinct host_id from session_tasks where status = 'queued'`);
    await Promise.all(hosts.map((h) => this.drain(h.host_id)));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.draining.values()]);
  }
}
