// Frames of running turns → normalized history, session state and events.
// One RunState per run on the node that holds the host's channel. Messages
// are buffered and written in batches (one statement per flush, never per
// delta); events describing persisted rows are published after the commit.
// A run's end is written by run-end.ts.
import { ChurnMap } from '../churn-map.js';
import type { HubContext } from '../context.js';
import type { FrameOf, HostToHub } from '../../host-protocol/frames.js';
import type { RunFrame } from '../hosts/gateway.js';
import { one, type Em } from './sql.js';
import { writeRunBatch, newRow, storedByRun, FLUSH_MS, type Ev, type RunEnd, type RunState } from './run-batch.js';
import { RunEndWriter, logRunEnd, refusedAsData, takeEndItem, type EndItem } from './run-end.js';
import { AgentChangeNotices } from './agent-notices.js';
import type { SessionEvents } from './events.js';
import type { Claim, ClaimedTask } from './queue.js';
import { engineSessionIdOf } from './engine-session.js';
import { frameBytes, limitsOf, toolUseBytes, type Limits } from '../limits.js';
import { HostOutput, SESSION_FULL } from './host-output.js';
import { ErrorCatalogue } from '../errors.js';
import { engineFailure } from './engine-failure.js';
import { PartialText } from './partial-text.js';
import { ClosedRuns } from './closed-runs.js';

/** How long rows whose write failed wait before the next try (the database may be restarting). */
const FLUSH_RETRY_MS = 1000;

export class RunTracker {
  /** Runs not yet ended here, and ended ones until their end is written (a ChurnMap: a run's state dies young). */
  private states = new ChurnMap<string, RunState>();
  /** Runs whose end is written, for a minute (closed-runs.ts). */
  private readonly retired = new ClosedRuns();
  private readonly limits: Limits;
  private readonly hostOutput: HostOutput; // each run's output bounds, and its host's runs' here (over())
  /** Set by close(): a run end still failing stops being retried (another node's sweep ends the run). */
  private closing = false;
  /** Runs loaded from the database because their frames arrived before this node knew them (tests count them). */
  loads = 0;
  private readonly endWriter: RunEndWriter;
  private readonly agentNotices: AgentChangeNotices;
  /** Sessions whose run's end this node is writing: settles once it landed (or gave up), its claim dispatched. */
  private readonly ending = new ChurnMap<string, Promise<void>>();

  constructor(
    private readonly ctx: HubContext,
    private readonly events: SessionEvents,
    /**
     * Called after a run's end is committed (the host's running count changed); `waiting`: whether the host has
     * waiting work left to drain, undefined when unknown; `claim`: the host's waiting runs the end started.
     */
    private readonly onEnded: (hostId: string, waiting?: boolean, claim?: Claim) => void,
    /** Stops a run's engine on its host (a run over its output bound). */
    private readonly abort: (hostId: string, runId: string) => void = () => {},
    /** The capacity of a host whose channel this node holds: a run's end starts that host's next waiting runs. */
    capacityOf?: (hostId: string) => number | undefined,
  ) {
    this.limits = limitsOf(ctx.config);
    this.hostOutput = new HostOutput(this.limits);
    this.endWriter = new RunEndWriter(ctx, capacityOf);
    this.agentNotices = new AgentChangeNotices(ctx.bus);
  }

  /**
   * A claimed task was sent to its host. `track`: this node holds the host's channel, so the run's
   * frames come here; otherwise the node holding it tracks the run from its run.start (tracked).
   */
  started(t: ClaimedTask, track = true): void {
    if (track) this.tracked(t);
    this.ctx.metrics.runStarted();
    this.ctx.log.info('run started', { runId: t.id, sessionId: t.sessionId, hostId: t.hostId, agentId: t.agentId, engine: t.engine, mode: t.mode });
    this.events.emit(t.sessionId, t.id, 'accepted', { runId: t.id });
  }

  /** Runs this node holds state for (tests: frames for unknown runs leave nothing behind). */
  get size(): number {
    return this.states.size;
  }

  /** Runs this node holds that have not ended (metrics, read at scrape time). */
  get running(): number {
    let n = 0;
    for (const s of this.states.values()) if (!s.closed) n++;
    return n;
  }

  /** Keeps state for a run whose frames come to this node (a no-op for a run it knows, or closed: a run.start sent again by another node). */
  tracked(t: { id: string; sessionId: string; hostId: string; agentId: string; engine: string }): void {
    if (!this.states.has(t.id) && !this.retired.has(t.id)) this.states.set(t.id, this.newState(t.id, t.sessionId, t.hostId, t.agentId, t.engine, true));
  }

  isLocal(runId: string): boolean {
    return this.states.has(runId) || this.retired.has(runId);
  }

  /**
   * Whether this node heard from the host about the run, or ended it (its end may not be written
   * yet): such a run's run.start is not sent again (scheduler.ts, reconcile). A closed run's state
   * stays a minute after its end was written.
   */
  heardFrom(runId: string): boolean {
    const st = this.states.get(runId);
    return this.retired.has(runId) || (!!st && (st.closed || st.heard === true));
  }

  handle(hostId: string, f: RunFrame): void {
    // A run is either tracked (states) or closed (retired), never both (tracked, forgetSoon): the live one, every delta's case, is looked up first.
    let st = this.states.get(f.runId);
    if (st) st.heard = true;
    else {
      const doneOn = this.retired.hostOf(f.runId);
      if (doneOn !== undefined) {
        if (f.t === 'run.end' && doneOn === hostId) this.lateEnd(f.runId, doneOn, f);
        return;
      }
      st = this.newState(f.runId, '', hostId, '', '', false);
      st.heard = true;
      this.states.set(f.runId, st);
      st.backlog.push(f);
      this.adopt(st).catch((e) => this.ctx.log.error('run frames could not be applied', { runId: f.runId, err: e })); // never an unhandled rejection
      return;
    }
    if (!st.ready) return this.hostOutput.hold(st, f);
    this.apply(st, f);
  }

  /** Ends a run from outside its frames (dispatch failure, host gone, abort). */
  end(runId: string, end: RunEnd, fallback?: { sessionId: string; hostId: string; agentId: string; engine: string }): Promise<void> {
    const done = this.retired.get(runId);
    if (done) return done.chain ?? Promise.resolve();
    let st = this.states.get(runId);
    if (!st) {
      if (!fallback) return Promise.resolve();
      st = this.newState(runId, fallback.sessionId, fallback.hostId, fallback.agentId, fallback.engine, true);
      this.states.set(runId, st);
    }
    return this.finish(st, end);
  }

  /**
   * Settles once the end of the session's run this node is writing has landed; undefined when it
   * writes none. For a caller that waits for it: an end still lingering for company goes now.
   */
  endOf(sessionId: string): Promise<void> | undefined {
    const ending = this.ending.get(sessionId);
    if (ending) this.endWriter.hurry();
    return ending;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.retired.close();
    await Promise.allSettled([...[...this.states.values()].map((s) => s.chain), ...this.retired.chains()]);
    this.agentNotices.flush();
    for (const s of this.states.values()) if (s.timer) clearTimeout(s.timer);
  }

  // ---------- frames ----------

  private apply(st: RunState, f: RunFrame): void {
    if (st.closed) {
      if (f.t === 'run.end') this.lateEnd(st.runId, st.hostId, f, st);
      return;
    }
    switch (f.t) {
      case 'run.init':
        st.model = f.model ?? st.model;
        st.engineSessionId = engineSessionIdOf(f.engineSessionId, this.ctx.log, st.runId) ?? st.engineSessionId;
        this.schedule(st, true);
        return;
      case 'run.delta': {
        const n = Buffer.byteLength(f.text);
        if (this.over(st, n)) return;
        st.partial.push(f.text, n);
        if (st.outq.length) st.outq.push({ ev: ['message.delta', { delta: f.text }] });
        // Stamped for the delta latency metric (a delta queued behind rows above is not measured).
        else this.events.emit(st.sessionId, st.runId, 'message.delta', { delta: f.text }, { at: Date.now() });
        return;
      }
      case 'run.message': {
        const n = frameBytes(f);
        const tools = toolUseBytes(f.blocks);
        if (this.over(st, n + tools, n)) return;
        st.pendingBytes += n;
        st.toolBytes += tools;
        st.storedBytes += n;
        for (const b of f.blocks) {
          if (f.role === 'assistant' && b.kind === 'text') {
            st.partial.clear();
          }
          if (f.role === 'user' && b.kind !== 'tool_result') continue; // the prompt echo is already stored
          const row = newRow(f.role, b);
          st.pending.push(row);
          if (b.kind === 'tool_use' || b.kind === 'tool_result') st.outq.push({ rowId: row.id });
        }
        this.schedule(st);
        return;
      }
      case 'run.end':
        st.hostEnded = true; // its error, if any, is the engine's own
        void this.finish(st, f);
        return;
    }
  }

  /** Whether `n` more bytes (`stored` of them kept) take the run over its output bounds (host-output.ts): then it ends OUTPUT_TOO_LARGE. */
  private over(st: RunState, n: number, stored = 0): boolean {
    if (!this.hostOutput.runOver(st, n, stored)) return false;
    this.tooLarge(st);
    return true;
  }

  /** Stops the run: over its output bounds, or (`full`) its session over SESSION_STORED_MAX_BYTES. */
  private tooLarge(st: RunState, full = false): void {
    if (st.closed) return;
    this.ctx.log.warn('run output over its bound: the run is stopped', { runId: st.runId, hostId: st.hostId, session: full || undefined });
    this.abort(st.hostId, st.runId);
    // Its slot stays held while the engine stops (engine_until, before the end's claim), as after an abort: freed
    // at once, the next waiting run went to a host still running this engine, which refused it (its --capacity).
    const graceMs = this.ctx.config.engineStopGraceMs;
    st.chain = st.chain.then(() => this.endWriter.holdSlot(st.runId, graceMs));
    setTimeout(() => this.onEnded(st.hostId), graceMs + 50).unref(); // the host never reported: the slot is back, drain
    void this.finish(st, { ok: false, error: full ? SESSION_FULL : { code: 'OUTPUT_TOO_LARGE', message: ErrorCatalogue.OUTPUT_TOO_LARGE.message } });
  }

  /** Whether a session is known here to store more than it may: its next runs are refused at dispatch (SESSION_FULL). */
  sessionFull(sessionId: string): boolean {
    return this.hostOutput.isFull(sessionId);
  }

  private schedule(st: RunState, soon = false, delayMs = soon ? 0 : FLUSH_MS): void {
    if (st.timer) return;
    st.timer = setTimeout(() => {
      st.timer = undefined;
      st.chain = st.chain.then(() => this.flush(st)).catch((e) => this.ctx.log.error('session flush failed', { runId: st.runId, err: e }));
    }, delayMs);
  }

  /**
   * Writes pending rows (and model / engine session) in one statement, then publishes their events. A failed
   * write gives its rows back, ahead of any that came since, to be written again as the same batch, alone (in
   * FLUSH_RETRY_MS, or just before the run's end): never dropped, nor taken as stored with rows that came since.
   */
  private async flush(st: RunState): Promise<void> {
    const again = st.givenBack ?? 0;
    const [batch, bytes] = again ? [st.pending.splice(0, again), st.givenBackBytes ?? 0] : [st.pending.splice(0), st.pendingBytes];
    st.pendingBytes -= bytes;
    st.givenBack = st.givenBackBytes = undefined;
    try {
      // One statement (writeRunBatch), atomic on its own: no BEGIN/COMMIT round trips around it.
      const evs = await writeRunBatch(this.ctx.em() as unknown as Em, st, batch, again > 0, bytes);
      this.publish(st, evs);
      if (this.hostOutput.sessionOver(st, this.ctx.config.sessionStoredMaxBytes)) this.tooLarge(st, true);
      if (again && st.pending.length && !st.closed) this.schedule(st);
    } catch (e) {
      st.pending.unshift(...batch);
      st.pendingBytes += bytes;
      Object.assign(st, { givenBack: batch.length, givenBackBytes: bytes });
      // Refused for its data, it would be refused again: the end writes the run without it (run-end.ts).
      const retry = !refusedAsData(e) && !st.closed;
      this.ctx.log.warn('run rows not written', { runId: st.runId, rows: batch.length, retryInMs: retry ? FLUSH_RETRY_MS : undefined, err: e });
      if (retry) this.schedule(st, false, FLUSH_RETRY_MS);
    }
  }

  /** After commit: marks the rows' events ready and releases the queue up to the first row not yet written. */
  private publish(st: RunState, evs: Array<[string, Ev]>, all = false): void {
    for (const [rowId, ev] of evs) st.rowEvents.set(rowId, ev);
    while (st.outq.length) {
      const o = st.outq[0];
      const ev = o.rowId ? st.rowEvents.get(o.rowId) : o.ev;
      if (!ev && !all) break;
      st.outq.shift();
      if (o.rowId) st.rowEvents.delete(o.rowId);
      if (ev) this.events.emit(st.sessionId, st.runId, ev[0], ev[1]);
    }
  }

  // ---------- the end of a run ----------

  private finish(st: RunState, end: RunEnd): Promise<void> {
    if (st.closed) return st.chain;
    st.closed = true;
    if (st.timer) {
      clearTimeout(st.timer);
      st.timer = undefined;
    }
    st.model = end.model ?? st.model;
    st.engineSessionId = engineSessionIdOf(end.engineSessionId, this.ctx.log, st.runId) ?? st.engineSessionId;
    let waiting: boolean | undefined; // unknown when the write failed: the scheduler looks for itself
    let claim: Claim | undefined;
    // Taken out of the state once (every retry writes the same rows), after a flush in flight has settled. Rows
    // a failed write gave back are written again alone first: that write knows a batch the failed call stored
    // after all, which hub_end_runs would refuse as duplicates. Failing again, they go with the end.
    st.chain = st.chain
      .then(() => (st.givenBack ? this.flush(st) : undefined))
      .then(() => this.finalize(st, takeEndItem(st, end)))
      .then((w) => void ({ waiting, claim } = w))
      .catch((e) => this.ctx.log.error('session run end failed', { runId: st.runId, err: e }))
      .finally(() => {
        this.forgetSoon(st);
        this.onEnded(st.hostId, waiting, claim);
      });
    const done = st.chain;
    const sid = st.sessionId;
    if (sid) {
      this.ending.set(sid, done);
      void done.then(() => {
        if (this.ending.get(sid) === done) this.ending.delete(sid);
      });
    }
    return done;
  }

  /** Writes the run's end; answers whether its host has waiting work left to drain, and what the end started there. */
  private async finalize(st: RunState, item: EndItem): Promise<{ waiting?: boolean; claim?: Claim }> {
    const { written, out } = await this.endWriter.writeUntilDone(item, () => this.closing);
    const end = written.end; // without the host's output if the database refused it
    if (!out) {
      // Ended before (an abort or a sweep on another node wrote it while this node tracked the run): whoever ended it
      // saw to the queue. The host's own end: its usage kept and charged, its slot free now, the host drained.
      if (!st.hostEnded) return { waiting: false };
      await this.endWriter.lateEnd(st.runId, end.usage);
      return {};
    }
    this.ctx.metrics.runEnded(out.status);
    logRunEnd(this.ctx.log, st, end, out.status);
    this.publish(st, out.evs, true);
    if (st.agentId) {
      this.agentNotices.add(st.agentId);
    }
    if (out.publishEnd) {
      if (out.status === 'completed') this.events.emit(st.sessionId, st.runId, 'run.completed', { status: 'completed' });
      else if (out.status === 'aborted') this.events.emit(st.sessionId, st.runId, 'run.error', { status: 'aborted', code: 'ABORTED', message: 'the host stopped the run' }); // e.g. its owner pressed Ctrl-C
      else this.events.emit(st.sessionId, st.runId, 'run.error', { status: 'error', ...engineFailure(end) });
    } // else aborted: the abort already told the readers
    return { waiting: out.waiting, claim: out.claim };
  }

  /**
   * run.end for a run this node already closed (aborted): keep its usage, and charge what it adds (billing/charge-function.ts).
   * `st`: the run's state, none once it is gone (its late writes are then chained by the closed runs: closed-runs.ts).
   */
  private lateEnd(runId: string, hostId: string, f: FrameOf<HostToHub, 'run.end'>, st?: RunState): void {
    const write = () => this.endWriter.lateEnd(runId, f.usage).then(() => this.onEnded(hostId)); // its slot back, then a drain
    if (st) st.chain = st.chain.then(write);
    else this.retired.follow(runId, write);
  }

  // ---------- runs unknown to this node ----------

  /**
   * A closed run's end is written: its state goes, and what a late frame needs of it stays a minute
   * (closed-runs.ts). `pending`: a late usage's write the state's chain still carries (a loaded run's backlog).
   */
  private forgetSoon(st: RunState, pending?: Promise<void>): void {
    this.hostOutput.untrack(st);
    if (this.states.get(st.runId) !== st) return;
    this.states.delete(st.runId);
    this.retired.add(st.runId, st.hostId, pending);
  }

  /** A run's state, counted on its host (host-output.ts) until forgetSoon: every caller keeps it in `states`. */
  private newState(runId: string, sessionId: string, hostId: string, agentId: string, engine: string, ready: boolean): RunState {
    const st: RunState = {
      runId, sessionId, hostId, agentId, engine, ready, since: Date.now(), backlog: [], closed: false, partial: new PartialText(this.limits.runOutputBytes), pending: [], toolSeq: new Map(), toolNames: new Map(), toolBytes: 0, storedBytes: 0,
      outq: [], rowEvents: new Map(), chain: Promise.resolve(), pendingBytes: 0, backlogBytes: 0, sinceHostCheck: 0,
    };
    return this.hostOutput.track(st);
  }

  /** A frame for a run this node did not start (hub restarted, or another node dispatched it): load it. */
  private async adopt(st: RunState): Promise<void> {
    let over = false;
    try {
      this.loads++;
      const t = await one(this.ctx.em() as unknown as Em, `select session_id, host_id, agent_id, engine, status, ended_at from session_tasks where id = ?`, [st.runId]);
      // The gateway passes on only frames of runs bound to the sending host; a run of another host is never adopted.
      if (t && t.host_id !== st.hostId) {
        this.ctx.log.warn('run frames from a host the run is not on are dropped', { runId: st.runId, hostId: st.hostId });
        Object.assign(st, { backlog: [], closed: true, ready: true });
        this.hostOutput.untrack(st);
        st.hostId = t.host_id; // what stays of it answers to the run's own host only
        return void this.forgetSoon(st);
      }
      if (t) Object.assign(st, { sessionId: t.session_id, agentId: t.agent_id, engine: t.engine });
      if (!t || t.ended_at || (t.status !== 'running' && t.status !== 'aborted')) over = true;
      // What it stored through other nodes counts against its bound here too (else it started over on each node).
      else st.storedBytes = await storedByRun(this.ctx.em() as unknown as Em, st.sessionId, st.runId);
    } catch (e) {
      this.ctx.log.error('cannot load run', { runId: st.runId, err: e });
      over = true;
    }
    if (over) st.closed = true;
    st.ready = true;
    st.backlogBytes = 0;
    for (const f of st.backlog.splice(0)) this.apply(st, f);
    if (st.overflow) this.tooLarge(st);
    // After its backlog: a late run.end in it extended the chain, which stays.
    if (over) this.forgetSoon(st, st.chain);
  }
}
