// Which runs a host's channel on this node may speak for (issue 10, hole 2),
// and the run-reconciliation verbs built on that. A channel speaks for the
// runs sent to it and, after its hello, for those the database holds open on
// its host; its run frames wait (bounded) until that look-up answers, one
// query in flight for all the hellos meanwhile. Frames for any other run are dropped.
import { CloseCodes } from '../../host-protocol/version.js';
import type { FrameOf, HubToHost } from '../../host-protocol/frames.js';
import type { Logger } from '../log.js';
import { frameBytes } from '../limits.js';
import type { RunFrame } from './gateway.js';
import type { HostConnection } from './connection.js';
import { Coalescer } from '../coalesce.js';

/** Run ids a channel remembers as sent again (see resend). */
const RESENT_MAX = 10_000;

/** A hello waiting for the look-up of its host's open runs: the runs the host reported, and when (epoch ms). */
export interface HelloRuns {
  hostId: string;
  running: string[];
  at: number;
}
export type RunResolver = (hellos: HelloRuns[]) => Promise<Array<{ hostId: string; runId: string }>>;
/** Which of a host's runs are still open (the database's view), kept on its channel: the others are forgotten. */
export type OpenRunsCheck = (hostId: string, runIds: string[]) => Promise<Set<string>>;

/** Run ids a channel holds past its capacity before it asks which are still open (a host may never end a run). */
const RUN_IDS_SLACK = 64;
/** Between two such questions for one channel. */
const RECHECK_MS = 10_000;

export class ChannelRuns {
  private handlers: Array<(hostId: string, f: RunFrame) => void> = [];
  /** Until a domain says which runs are open (sessions/ does at start), a channel speaks only for the runs sent to it. */
  private resolver: RunResolver = async () => [];
  /** Until a domain answers it, a channel forgets no run it was sent. */
  private openCheck: OpenRunsCheck | undefined;
  /** Channels that said hello and wait for their open runs to be looked up (one query in flight; the hellos meanwhile go in the next). */
  private admitting = new Coalescer<{ conn: HostConnection; hello: HelloRuns }>((items) => this.admitOpenRuns(items), 1000);
  /** Run frames dropped on this node because their run is not bound to the sending channel. */
  dropped = 0;

  constructor(
    private readonly log: Logger,
    /** Bytes of run frames a channel may hold while its runs are looked up; past it the channel is closed. */
    private readonly heldBytesMax: number,
    /** Calls a domain's handler, logging what it throws. */
    private readonly safe: (fn: () => void) => void,
  ) {}

  onRunFrame(handler: (hostId: string, frame: RunFrame) => void): void {
    this.handlers.push(handler);
  }

  setResolver(resolve: RunResolver): void {
    this.resolver = resolve;
  }

  setOpenCheck(check: OpenRunsCheck): void {
    this.openCheck = check;
  }

  /** The channel said hello (its host runs `running`): its frames for runs started before it wait until the database says which are its own. */
  hello(conn: HostConnection, running: string[]): void {
    conn.held = [];
    this.admitting.add({ conn, hello: { hostId: conn.hostId, running, at: Date.now() } });
  }

  /** A run frame from the channel: held while its runs are looked up, else passed on if the run is bound to it. */
  frame(conn: HostConnection, f: RunFrame): void {
    if (conn.held) {
      conn.heldBytes += frameBytes(f);
      if (conn.heldBytes > this.heldBytesMax) return conn.close(CloseCodes.FRAME_RATE);
      conn.held.push(f);
      return;
    }
    this.accept(conn, f);
  }

  /** A run.start for the channel: binds the run to it; false when it was sent again already (the host must not start it twice). */
  starting(conn: HostConnection, runId: string): boolean {
    if (conn.resent?.has(runId)) return false;
    (conn.runs ??= new Set()).add(runId); // this channel may now speak for the run
    this.bound(conn);
    return true;
  }

  /**
   * Only the host's run.end takes a run off its channel: a run the hub ended itself (an abort the host never
   * answered) stayed for the channel's life, an id per run for good. Past its capacity and some slack, the
   * channel keeps only the runs the database still holds open (asked at most every RECHECK_MS).
   */
  private bound(conn: HostConnection): void {
    const runs = conn.runs!;
    const now = Date.now();
    if (!this.openCheck || runs.size <= conn.capacity + RUN_IDS_SLACK || conn.runsCheckedAt > now - RECHECK_MS) return;
    conn.runsCheckedAt = now;
    const asked = [...runs];
    this.openCheck(conn.hostId, asked).then(
      (open) => {
        for (const id of asked) if (!open.has(id)) runs.delete(id);
      },
      (e: unknown) => this.log.warn('cannot check which runs of a host are still open', { hostId: conn.hostId, err: e }),
    );
  }

  /** The channel is open and past the look-up of its open runs. */
  settled(conn: HostConnection): boolean {
    return !!conn.socket && !conn.held;
  }

  /** Whether the channel carried the run (its run.start, or open at the hello). */
  carries(conn: HostConnection, runId: string): boolean {
    return !!conn.runs?.has(runId) || !!conn.resent?.has(runId);
  }

  /** Sends a run.start again on the channel, at most once per run; false when the channel cannot take it or carries the run. */
  resend(conn: HostConnection, frame: FrameOf<HubToHost, 'run.start'>): boolean {
    if (!conn.socket || conn.held || conn.runs?.has(frame.runId) || conn.resent?.has(frame.runId)) return false;
    const resent = (conn.resent ??= new Set());
    if (resent.size >= RESENT_MAX) resent.clear(); // late first copies come within seconds, not after thousands of resends
    resent.add(frame.runId);
    (conn.runs ??= new Set()).add(frame.runId);
    return conn.send(frame);
  }

  /** A run frame is passed on only from the channel its run is bound to; anything else is dropped (issue 10, hole 2). */
  private accept(conn: HostConnection, f: RunFrame): void {
    if (!conn.runs?.has(f.runId)) {
      this.dropped++;
      if (conn.dropped++ === 0) this.log.warn('run frames for a run not bound to this host are dropped', { hostId: conn.hostId, runId: f.runId, frame: f.t });
      return;
    }
    if (f.t === 'run.end') conn.runs!.delete(f.runId); // exactly one run.end per run
    for (const h of this.handlers) this.safe(() => h(conn.hostId, f));
  }

  /** Looks up the open runs of the channels that said hello since the last call, then passes on what they held. */
  private async admitOpenRuns(items: Array<{ conn: HostConnection; hello: HelloRuns }>): Promise<void> {
    const conns = items.map((i) => i.conn);
    // A host that said hello twice meanwhile (it reconnected) is looked up once, with its later hello.
    const hellos = new Map(items.map((i) => [i.hello.hostId, i.hello]));
    let open: Array<{ hostId: string; runId: string }>;
    try {
      open = await this.resolver([...hellos.values()]);
    } catch (e) {
      this.log.error('cannot look up the open runs of reconnected hosts', { hosts: conns.map((c) => c.hostId), err: e });
      for (const c of conns) c.close(CloseCodes.GOING_AWAY); // they reconnect and are looked up again
      return;
    }
    for (const c of conns) {
      if (!c.socket || !c.held) continue;
      for (const o of open) if (o.hostId === c.hostId) (c.runs ??= new Set()).add(o.runId);
      const held = c.held;
      c.held = null;
      c.heldBytes = 0;
      for (const f of held) this.accept(c, f);
    }
  }
}
