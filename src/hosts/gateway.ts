// The contract between the host channel (hosts/) and the domains that use
// hosts (sessions/, model-configs/, agents/). Implemented by hosts/; the
// others depend only on this interface, never on WebSocket details.
import type { Engine, HubToHost, FrameOf, HostToHub } from '../../host-protocol/frames.js';
import type { OpenRunsCheck, RunResolver } from './channel-runs.js';
import type { SendPresence } from './recent-presence.js';

export type { SendPresence };

export type HostStatus = 'online' | 'busy' | 'offline';

export interface HostPresence {
  hostId: string;
  status: HostStatus;
  /** Runs the hub believes are executing on the host. */
  running: number;
  capacity: number;
  engines: Engine[];
  lastSeenAt: number | null;
  /**
   * The node holding the host's channel at this read (internal, never in a response): where a
   * run.start for it can go without reading presence again (`send`'s `via`).
   */
  nodeId?: string;
}

export type RunFrame = FrameOf<HostToHub, 'run.init' | 'run.delta' | 'run.message' | 'run.end'>;
/** Omit distributed over each member of a union (plain Omit would collapse it to the common keys). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** What the node holding a host's channel needs to track a run sent there from another node (sessions/runs.ts). */
export interface RunStartMeta {
  agentId: string;
}

export type RequestFrame = OmitEach<FrameOf<HubToHost, 'settings.apply' | 'dirs.list' | 'engines.refresh' | 'run.abort' | 'model.test'>, 'id'>;

export interface HostGateway {
  /** Presence of one host (any node's channel). Offline when no node holds it. */
  presence(hostId: string): Promise<HostPresence>;
  presenceMany(hostIds: string[]): Promise<Map<string, HostPresence>>;
  /**
   * Which of these hosts hold a live channel now: here after its hello, or on another node by
   * presence. A host whose channel closed and that is back has its runs reconciled by its hello
   * (the runs it reports, the lost-run grace); whoever saw it close leaves them alone.
   */
  connected(hostIds: string[]): Promise<Set<string>>;
  /**
   * Fire-and-forget frame to the host wherever its channel is. Throws HubError HOST_OFFLINE if none holds it.
   * A run.start's `meta` travels with it to the node holding the channel (onRunStarting).
   * `via`: the node a presence read just named (HostPresence.nodeId), sent to without reading presence
   * again; a node that no longer holds the channel routes the frame on to the one presence names then.
   */
  send(hostId: string, frame: FrameOf<HubToHost, 'run.start' | 'run.abort'>, meta?: RunStartMeta, via?: string): Promise<void>;
  /**
   * Presence as a message send needs it: the channel held here, else a reading of the host on another
   * node kept a moment (routing.ts, PRESENCE_REUSE_MS), else a fresh one. Offline when no node holds it.
   * A value when known in this turn (the message path awaits nothing it need not).
   */
  presenceToSend(hostId: string): SendPresence | Promise<SendPresence>;
  /**
   * A run.start sent with `meta` reached no channel: no node holds its host any more (it went offline
   * after the sender read presence). The run never started; the domain ends it.
   */
  onRunUndelivered(handler: (hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void): void;
  /** Request with a reply. Throws HOST_OFFLINE, or HOST_TOO_OLD/HOST_TIMEOUT when no reply comes in time. Resolves with reply.data; rejects with a HubError when reply.ok is false. */
  request(hostId: string, frame: RequestFrame, timeoutMs?: number): Promise<unknown>;
  /**
   * Which of these hosts' runs are still open (the database's view): after a hello, a channel may
   * speak for these runs and for those sent to it; its run frames wait until this answers. Called
   * once for the hellos gathered while the previous call ran, each with the runs the host reported
   * (`running`) and when it said hello (`at`, epoch ms): the domain's own work after a hello can use
   * the same look-up.
   */
  setRunResolver(resolve: RunResolver): void;
  /** Which of a host's runs are still open: a channel holding many more than its capacity forgets the others. */
  setOpenRunsCheck(check: OpenRunsCheck): void;
  /**
   * Hosts whose channel this node holds, past the look-up of their open runs (hello): the node
   * that compares what the database holds open on them with what their channels carried.
   */
  heldHosts(): string[];
  /**
   * The capacity the host announced on the channel this node holds (past its hello's look-up of
   * open runs); undefined when the channel is elsewhere. Lets a run's end start the next waiting
   * run in the same database call without asking the presence store.
   */
  heldCapacity(hostId: string): number | undefined;
  /** Whether this node's channel of the host carried the run (its run.start, or open at the hello). */
  carries(hostId: string, runId: string): boolean;
  /**
   * Sends a run.start again on this node's channel of the host, for a run whose first one never
   * reached it; at most once per run and channel, and the first one arriving late is dropped then.
   * False when the channel is not here or already carries the run.
   */
  resend(hostId: string, frame: FrameOf<HubToHost, 'run.start'>): boolean;
  /**
   * On the node holding the host's channel, a run.start sent with `meta` (from any node, this one
   * included) is about to go out on it: the run's frames will come here.
   */
  onRunStarting(handler: (hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void): void;
  /** Run frames from hosts whose channel this node holds, only for runs bound to that host. */
  onRunFrame(handler: (hostId: string, frame: RunFrame) => void): void;
  /** A host finished its hello (ran `running` = runIds it still runs). */
  onHostUp(handler: (hostId: string, info: { running: string[] }) => void): void;
  /** Hosts that finished their hello since the last call, at most one call per event-loop turn: lets a domain do one query for a reconnect storm instead of one per host. */
  onHostsUp(handler: (hosts: Array<{ hostId: string; running: string[] }>) => void): void;
  /** A host's channel closed (or its presence expired). */
  onHostDown(handler: (hostId: string) => void): void;
  /**
   * Hosts whose presence the store had lost (Redis restarted empty) and this node wrote again:
   * they were offline to every node meanwhile, so work that waited for them may start now.
   */
  onPresenceRestored(handler: (hostIds: string[]) => void): void;
  /** Tell the gateway how many runs the host is executing (kept by sessions/). */
  setRunning(hostId: string, running: number): void;
  /** The host's running count dropped to zero (model-configs delivers pending settings then). */
  onIdle(handler: (hostId: string) => void): void;
}
