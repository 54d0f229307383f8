// Starts runs on hosts and keeps the queue moving: dispatches claimed tasks,
// drains a host's queue when a run ends or the host comes up, fails runs
// whose host went away, and keeps the gateway's running count true.
// The host-down pass: host-down.ts; the lost-run sweep: lost-runs.ts.
import type { HubContext } from '../context.js';
import { SESSION_FULL } from './host-output.js';
import type { HostGateway } from '../hosts/gateway.js';
import { claimForHost, readClaimed, type Claim, type ClaimedTask } from './queue.js';
import { rows, type Em } from './sql.js';
import { pooled } from '../db/pooled.js';
import type { RunTracker } from './runs.js';
import { HostDownPass } from './host-down.js';
import { LostRunSweep } from './lost-runs.js';
import { isEngineSessionId } from '../../host-protocol/engine-values.js';
import { capMode, runFactsOf, type ModeFacts } from '../agents/usage.js';
import type { FrameOf, HubToHost } from '../../host-protocol/frames.js';
import type { HelloRuns } from '../hosts/channel-runs.js';

/** After a host's hello, how long its buffered run frames get before its unknown runs count as lost. */
export const LOST_RUN_GRACE_MS = 3000;
/** At most this many runs are looked at per lost-run sweep (and hosts per query of the host-down pass and the reconciliation). */
const SWEEP_BATCH = 500;
/** How long after its engine should have stopped a run's end is still taken from its host (and charged). */
const LATE_END_MINUTES = 10;
/** Delay before re-draining a host whose claim skipped a locked session. */
const RETRY_SKIPPED_MS = 50;
/** First delay, and the longest, before a drain that failed is tried again. */
const DRAIN_RETRY_MS = 500;
const DRAIN_RETRY_MAX_MS = 30_000;
/**
 * Hosts whose runs started or ended (or whose claim started nothing) are recounted into presence
 * this long after the first of a burst, with one query for every host of the window. Presence's count is advisory (status
 * busy/online, "idle" for owed settings, which a lease checks in the database); capacity itself is
 * counted under the host's lock. At 20 ms the recount was 0.08 queries per message at 500 msg/s.
 */
export const RECOUNT_DELAY_MS = 100;

export class Scheduler {
  private draining = new Map<string, Promise<void>>();
  private again = new Set<string>();
  /** Hosts with a drain planned for when their settings lease expires. */
  private leaseWaits = new Set<string>();
  private closed = false;
  /** Ends the runs of hosts whose channel closed. */
  private readonly down: HostDownPass;
  /** Ends the runs of hosts gone longer than the heartbeat window. */
  private readonly lostRuns: LostRunSweep;

  constructor(
    private readonly ctx: HubContext,
    private readonly gateway: HostGateway,
    private readonly runs: () => RunTracker,
    /** True once this node is shutting down: its hosts go elsewhere with their runs. */
    private readonly stopping: () => boolean,
  ) {
    const gone = { em: () => this.em(), orm: ctx.orm, gateway, runs, log: ctx.log, batch: SWEEP_BATCH };
    this.down = new HostDownPass(gone, () => this.closed || this.stopping());
    this.lostRuns = new LostRunSweep(gone, () => this.closed, stopping);
    gateway.onRunFrame((hostId, f) => this.runs().handle(hostId, f));
    // A run sent here from another node: known from its run.start, not read back when its frames come.
    // It is counted into presence here too, where its end will be: the node that sent it does not count it.
    gateway.onRunStarting((hostId, f, meta) => {
      this.runs().tracked({ id: f.runId, sessionId: f.sessionId, hostId, agentId: meta.agentId, engine: f.engine });
      this.countSoon(hostId);
    });
    // A run.start that reached no channel (its host went offline after the sender read presence): the run never started.
    gateway.onRunUndelivered((hostId, f, meta) => void this.notStarted({ id: f.runId, sessionId: f.sessionId, hostId, agentId: meta.agentId, engine: f.engine }));
    // After a hello, a host may speak for the runs the database holds open on it (and those sent to it since);
    // the same look-up finds its waiting work and its lost runs. A reconnect storm costs one query in flight
    // for all the hellos meanwhile, not one per host.
    gateway.setRunResolver((hellos) => this.hostsUp(hellos));
    // Open: waiting, running, or aborted with an end the host may still report (charged when it comes).
    gateway.setOpenRunsCheck(async (hostId, runIds) => new Set((await pooled<{ id: string }>(this.ctx.orm,
      `select id from session_tasks where id = any(?::text[]) and host_id = ?
          and ((ended_at is null and status in ('queued', 'running')) or engine_until > now() - interval '${LATE_END_MINUTES} minutes')`, [runIds, hostId])).map((r) => r.id)));
    gateway.onHostDown((hostId) => this.down.hostDown(hostId));
    // Presence lost by Redis and written again: a drain that found the host offline meanwhile did nothing.
    gateway.onPresenceRestored((hostIds) => {
      for (const id of hostIds) void this.drain(id);
    });
  }

  private em(): Em {
    return this.ctx.em() as unknown as Em;
  }

  /** Sends run.start for a claimed task (after the claim committed). */
  async dispatch(t: ClaimedTask): Promise<void> {
    // The node holding the host's channel tracks the run: here, or wherever the run.start goes (onRunStarting).
    this.runs().started(t, this.gateway.heldCapacity(t.hostId) !== undefined);
    try {
      // Its session filled up while it waited (a run's write found it over SESSION_STORED_MAX_BYTES).
      if (this.runs().sessionFull(t.sessionId)) return await this.refused(t, { code: SESSION_FULL.code, unusable: SESSION_FULL.message });
      // The user may have lost the agent since the message was accepted (removed, disabled, unlisted), or
      // its owner moved or narrowed it.
      const asked = runFactsOf(this.ctx, t.userId, t.agentId, t);
      const facts = asked instanceof Promise ? await asked : asked;
      if ('unusable' in facts) return await this.refused(t, facts);
      // Counted into presence by the node holding the channel, as its run.start goes out (onRunStarting).
      await this.gateway.send(t.hostId, this.frameWith(t, facts), { agentId: t.agentId }, t.via);
      if (t.acceptedAt !== undefined) this.ctx.metrics.dispatchSeconds.observe((performance.now() - t.acceptedAt) / 1000);
    } catch (e) {
      this.ctx.log.warn('dispatch failed', { runId: t.id, hostId: t.hostId, err: e }); // the error itself: a database error's values stay out (log.ts)
      await this.notStarted(t);
    }
  }

  /** A run whose run.start reached no channel: it ends HOST_OFFLINE (its end counts the host). */
  private notStarted(t: { id: string; sessionId: string; hostId: string; agentId: string; engine: string }): Promise<void> {
    return this.runs().end(t.id, { ok: false, error: { code: 'HOST_OFFLINE', message: 'the host went offline before the run started' } },
      { sessionId: t.sessionId, hostId: t.hostId, agentId: t.agentId, engine: t.engine });
  }

  /** A run that may not start (runFactsOf): it ends with the refusal's code, nothing reaches the host (its end frees the slot). */
  private refused(t: ClaimedTask, why: { unusable: string; code: string }): Promise<void> {
    this.ctx.log.info('run refused at dispatch', { runId: t.id, agentId: t.agentId, code: why.code });
    return this.runs().end(t.id, { ok: false, error: { code: why.code, message: why.unusable } },
      { sessionId: t.sessionId, hostId: t.hostId, agentId: t.agentId, engine: t.engine });
  }

  private frameWith(t: ClaimedTask, facts: ModeFacts): FrameOf<HubToHost, 'run.start'> {
    return {
      t: 'run.start', runId: t.id, sessionId: t.sessionId, engine: t.engine, prompt: t.prompt, workDir: t.workDir,
      // A value stored before it was checked (runs.ts) never reaches the engine's argv.
      ...(t.resume && isEngineSessionId(t.resume) ? { resume: t.resume } : {}),
      mode: this.runMode(t, facts), ...(t.effort ? { effort: t.effort } : {}),
      // Not the owner's: the host withholds the owner's own engine settings (host-cli/guest-settings.ts).
      ...(t.userId !== facts.ownerId ? { guest: true } : {}),
    };
  }

  /**
   * The task's mode capped to the agent's current ceiling for the task's user (agents/modes.ts):
   * a session, or a message queued, while the ceiling was higher never runs above it now.
   * Served from the in-process agents catalog.
   */
  private runMode(t: ClaimedTask, facts: ModeFacts): string {
    const mode = capMode(facts, t.userId, t.mode);
    if (mode !== t.mode) this.ctx.log.info('run mode capped to the agent\'s ceiling', { runId: t.id, asked: t.mode, mode });
    return mode;
  }

  private counting = new Set<string>();
  private countTimer?: NodeJS.Timeout;
  /** Recounts hosts' runs within RECOUNT_DELAY_MS: a burst of starts and ends on any number of hosts costs one query. */
  private countSoon(hostId: string): void {
    this.counting.add(hostId);
    this.countTimer ??= setTimeout(() => {
      this.countTimer = undefined;
      const ids = [...this.counting];
      this.counting.clear();
      if (!this.closed) this.refreshRunning(...ids).catch(() => undefined);
    }, RECOUNT_DELAY_MS);
    this.countTimer.unref?.();
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
      .then(() => void this.failedDrains.delete(hostId), (e) => this.retryDrain(hostId, e))
      .finally(() => this.draining.delete(hostId));
    this.draining.set(hostId, p);
    return p;
  }

  /** Per host, drains failed in a row (a database or Redis outage): nothing else may come to wake its queue. */
  private failedDrains = new Map<string, number>();

  /** Tries a failed drain again with backoff (0.5 s doubling to 30 s) until one goes through. */
  private retryDrain(hostId: string, err: unknown): void {
    const n = (this.failedDrains.get(hostId) ?? 0) + 1;
    this.failedDrains.set(hostId, n);
    if (n === 1) this.ctx.log.error('drain failed', { hostId, err }); // once per outage, not per retry
    if (this.closed) return;
    setTimeout(() => void this.drain(hostId), Math.min(DRAIN_RETRY_MAX_MS, DRAIN_RETRY_MS * 2 ** (n - 1))).unref?.();
  }

  private async drainOnce(hostId: string): Promise<void> {
    // A channel held here knows its capacity; another node's is read from presence, fresh: a drain
    // started on a stale reading would start waiting messages of a host gone offline, and fail them.
    const held = this.gateway.heldCapacity(hostId);
    const p = held !== undefined ? { status: 'online', capacity: held, nodeId: undefined } : await this.gateway.presence(hostId);
    // Offline, or named on this node whose channel of it closed (the entry's removal on its way): the work waits.
    if (p.status === 'offline' || p.nodeId === this.ctx.config.nodeId) return;
    // One round trip in autocommit (hub_claim): the host row is locked only while the claim runs.
    const claim = await claimForHost(this.em(), hostId, p.capacity);
    for (const t of claim.tasks) t.via = p.nodeId; // sent where the reading says, without reading presence again
    await this.claimed(hostId, claim);
  }

  /** After a claim of the host committed (a drain's, or one inside a run's end): dispatches what it started, and plans what it could not. */
  private async claimed(hostId: string, { tasks, skipped, leaseMs }: Claim): Promise<void> {
    // Settings are being written: the holder drains the host when it ends; this timer covers a holder that died.
    if (leaseMs !== undefined && !this.closed && !this.leaseWaits.has(hostId)) {
      this.leaseWaits.add(hostId);
      setTimeout(() => {
        this.leaseWaits.delete(hostId);
        void this.drain(hostId);
      }, leaseMs + RETRY_SKIPPED_MS).unref?.();
    }
    for (const t of tasks) await this.dispatch(t);
    if (!tasks.length) this.countSoon(hostId);
    // A session skipped because another transaction held it (a running session is not skipped
    // forever: its run's end drains again) gets another look once that transaction is done.
    if (skipped && !this.closed) setTimeout(() => void this.drain(hostId), RETRY_SKIPPED_MS).unref?.();
  }

  /** Runs the database holds as running on these hosts → the gateway's counts. */
  async refreshRunning(...hostIds: string[]): Promise<void> {
    if (!hostIds.length) return;
    const r = await pooled<{ host_id: string; c: string }>(this.ctx.orm,
      `select host_id, count(*) as c from session_tasks where host_id = any(?::text[]) and status = 'running' group by host_id`, [hostIds]);
    const counts = new Map(r.map((x) => [x.host_id, Number(x.c)]));
    for (const h of hostIds) this.gateway.setRunning(h, counts.get(h) ?? 0);
  }

  private endedHosts = new Set<string>();
  /**
   * A run ended (committed): capacity freed, the next waiting message may start. `waiting` says
   * whether the host has waiting work, as hub_end_runs saw it after taking the session locks (a
   * message queued for host capacity after that drains its host itself, Messaging.send). When it is
   * unknown, the hosts whose runs ended in one loop turn are looked at with one unlocked query, and
   * only those with waiting work are drained (a drain locks the host row, which accepts need too).
   */
  ended(hostId: string, waiting?: boolean, claim?: Claim): void {
    if (this.closed) return;
    this.countSoon(hostId); // presence shows the freed capacity (and idle hosts get owed settings)
    // The end started the host's next waiting runs itself (hub_end_runs): no claim of its own is needed.
    if (claim) void this.claimed(hostId, claim).catch((e) => this.retryDrain(hostId, e));
    if (waiting === true) return void this.drain(hostId);
    if (waiting === false) return;
    if (this.endedHosts.size === 0) setImmediate(() => void this.drainEnded());
    this.endedHosts.add(hostId);
  }

  private async drainEnded(): Promise<void> {
    const ids = [...this.endedHosts];
    this.endedHosts.clear();
    try {
      const waiting = await pooled<{ host_id: string }>(this.ctx.orm,
        `select distinct host_id from session_tasks where host_id = any(?::text[]) and status = 'queued'`, [ids]);
      for (const w of waiting) void this.drain(w.host_id);
    } catch (e) {
      this.ctx.log.error('drain check failed', { hosts: ids, err: e });
      for (const h of ids) void this.drain(h); // the slow way: each drain finds out for itself
    }
  }

  /**
   * Hosts said hello (the hellos gathered while the previous call ran, hosts/channel-runs.ts): one
   * query answers which runs are open on them (their channels may speak for those), which hosts have
   * waiting work (they drain), and which runs the hub thinks are on a host that no longer runs them
   * (lost, judged after a grace). A failure is thrown: the channels close and their hosts say hello again.
   */
  private async hostsUp(hellos: HelloRuns[]): Promise<Array<{ hostId: string; runId: string }>> {
    if (!hellos.length) return [];
    const ids = hellos.map((h) => h.hostId);
    const open = await pooled<{ id: string; status: string; host_id: string; session_id: string; agent_id: string; engine: string }>(this.ctx.orm,
      `select id, status, host_id, session_id, agent_id, engine from session_tasks
        where host_id = any(?::text[]) and status in ('queued', 'running', 'aborted') and ended_at is null`, [ids]);
    // Drained once the channels are admitted with this answer: the drain then knows their capacity without a presence read.
    const waiting = new Set(open.filter((t) => t.status === 'queued').map((t) => t.host_id));
    if (waiting.size) setImmediate(() => { for (const h of waiting) void this.drain(h); });
    const started = open.filter((t) => t.status !== 'queued');
    // Only runs started before the batch's first hello are judged (one dispatched since is not in `running`).
    const helloAt = new Date(Math.min(...hellos.map((h) => h.at)));
    // Each host speaks for its own runs only (its latest hello of the batch): merged, another account's host
    // listing a run's id kept that run open for good on a host that had lost it.
    const still = new Map(hellos.map((h) => [h.hostId, new Set(h.running)]));
    const suspects = started.filter((t) => !still.get(t.host_id)?.has(t.id));
    if (suspects.length) void this.lostAfterHello(ids, suspects, helloAt); // not awaited: the next batch of hellos goes on
    return started.map((t) => ({ hostId: t.host_id, runId: t.id }));
  }

  /**
   * A run that ended while the host was away is not in `running`, but its frames (kept by the
   * host while disconnected) follow the welcome: judge only what is still open after they had time,
   * and only runs started before the hello.
   */
  private async lostAfterHello(ids: string[], suspects: Array<{ id: string; host_id: string; session_id: string; agent_id: string; engine: string }>, helloAt: Date): Promise<void> {
    await new Promise((r) => setTimeout(r, LOST_RUN_GRACE_MS).unref?.());
    if (this.closed || this.stopping()) return;
    try {
      const sus = [...new Set(suspects.map((t) => t.host_id))];
      const stillOpen = new Set((await pooled<{ id: string }>(this.ctx.orm,
        `select id from session_tasks where host_id = any(?::text[]) and status in ('running', 'aborted') and ended_at is null and started_at < ?`,
        [sus, helloAt])).map((r) => r.id));
      for (const t of suspects) {
        if (!stillOpen.has(t.id)) continue;
        await this.runs().end(t.id, { ok: false, error: { code: 'HOST_DISCONNECTED', message: 'the host restarted and the run was lost' } },
          { sessionId: t.session_id, hostId: t.host_id, agentId: t.agent_id, engine: t.engine });
      }
    } catch (e) {
      this.ctx.log.error('host up handling failed', { hosts: ids, err: e });
    }
  }

  /**
   * Starts the lost-run sweep now and every half window (lost-runs.ts): runs left `running` on a host
   * that has had no presence for `windowMs` (the heartbeat window) end with HOST_DISCONNECTED.
   */
  startSweep(windowMs: number): void {
    this.lostRuns.start(windowMs);
  }

  /** One bounded pass of the lost-run sweep; returns how many runs it ended. */
  sweep(windowMs: number): Promise<number> {
    return this.lostRuns.sweep(windowMs);
  }

  private reconcileTimer?: NodeJS.Timeout;

  /**
   * Starts the reconciliation of this node's host channels now and every `periodMs`: see reconcile.
   * A run is judged once it has been `running` for `periodMs`, far longer than a publish takes.
   */
  startReconcile(periodMs: number): void {
    const tick = () => {
      if (this.closed) return;
      this.reconcile(periodMs)
        .catch((e) => this.ctx.log.error('run reconciliation failed', { err: e }))
        .finally(() => {
          if (!this.closed) (this.reconcileTimer = setTimeout(tick, periodMs)).unref?.();
        });
    };
    (this.reconcileTimer = setTimeout(tick, periodMs)).unref?.();
  }

  /**
   * One pass over the hosts whose channel this node holds: a run the database holds `running` on
   * such a host (claimed over `graceMs` ago) that the channel never carried, and that the host never
   * spoke about here, lost its run.start on the way (a publish while this node's bus subscription was
   * down, e.g. Redis restarting): it is sent again on the channel, at most once per channel (the
   * gateway drops a late first copy), so the host starts it once. The run stays the same run; its
   * end is written once as always. One indexed query per 500 hosts; the prompts are read only for
   * the rare lost run. Returns how many run.start frames were sent again.
   */
  async reconcile(graceMs: number): Promise<number> {
    const held = this.gateway.heldHosts();
    let sent = 0;
    for (let i = 0; i < held.length && !this.closed && !this.stopping(); i += SWEEP_BATCH) {
      const ids = held.slice(i, i + SWEEP_BATCH);
      const open = await pooled<{ id: string; host_id: string }>(this.ctx.orm,
        `select id, host_id from session_tasks where host_id = any(?::text[]) and status = 'running' and ended_at is null
          and started_at < now() - make_interval(secs => ?) order by started_at limit ${SWEEP_BATCH}`, [ids, graceMs / 1000]);
      const lost = open.filter((t) => !this.gateway.carries(t.host_id, t.id) && !this.runs().heardFrom(t.id));
      if (!lost.length) continue;
      for (const t of await readClaimed(this.em(), lost.map((x) => x.id))) {
        if (this.gateway.carries(t.hostId, t.id) || this.runs().heardFrom(t.id)) continue; // arrived meanwhile
        const facts = await runFactsOf(this.ctx, t.userId, t.agentId, t);
        if ('unusable' in facts) {
          await this.refused(t, facts);
          continue;
        }
        if (!this.gateway.resend(t.hostId, this.frameWith(t, facts))) continue;
        sent++;
        this.ctx.log.warn('run.start never reached the host\'s channel: sent again', { runId: t.id, hostId: t.hostId, sessionId: t.sessionId });
      }
    }
    return sent;
  }

  /** Drains every host with waiting work (hub start: hosts that reconnected before this ran). */
  async drainAll(): Promise<void> {
    const hosts = await rows<{ host_id: string }>(this.em(), `select distinct host_id from session_tasks where status = 'queued'`);
    await Promise.all(hosts.map((h) => this.drain(h.host_id)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lostRuns.close();
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    if (this.countTimer) clearTimeout(this.countTimer);
    await Promise.allSettled([...this.draining.values()]);
  }
}
