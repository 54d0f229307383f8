// The node side of the host channel and the HostGateway other domains use.
// A frame for host H goes straight to H's channel when this node holds it;
// otherwise to the node presence names, over the Bus (routing.ts: one
// subscription per node, none per host, so a connect storm costs Redis no
// SUBSCRIBE and a channel holds no subscription). Replies come back on
// `hostreply:<node>`. A frame or request for a host nobody holds fails at once.
// One sweep timer judges every channel's liveness (liveness.ts); connections
// hold none. Which runs a channel may speak for: channel-runs.ts; keeping presence
// alive: presence-upkeep.ts; requests and their replies across nodes: forwarding.ts.
import type { HubContext } from '../context.js';
import type { Engine, FrameOf, HostToHub, HubToHost } from '../../host-protocol/frames.js';
import { CloseCodes, PROTOCOL_VERSION } from '../../host-protocol/version.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import type { HostGateway, HostPresence, RequestFrame, RunFrame, RunStartMeta } from './gateway.js';
import type { Presence, PresenceEntry, Written } from './presence.js';
import type { HostStore } from './store.js';
import { HostConnection, type ChannelOwner } from './connection.js';
import { RequestForwarding } from './forwarding.js';
import type { HostIdentity } from './store.js';
import { limitsOf, TokenBucket, type Limits } from '../limits.js';
import { ChannelRuns, type OpenRunsCheck, type RunResolver } from './channel-runs.js';
import { PresenceUpkeep } from './presence-upkeep.js';
import { PreHello } from './pre-hello.js';
import { LivenessSweep } from './liveness.js';
import { HostRouting, hostsTopic, PRESENCE_REUSE_MS, type HostMsg, type SendMsg } from './routing.js';
import type { SendPresence } from './recent-presence.js';
import { EngineLists } from './engine-lists.js';

export { hostsTopic };

export interface ChannelTiming {
  /** Silence after which a channel is closed and the host reads offline. */
  heartbeatTimeoutMs: number;
  /** How long a request waits for the host's reply. */
  requestTimeoutMs: number;
  /** How long a send reuses a presence reading of a host held by another node (routing.ts; default PRESENCE_REUSE_MS). */
  presenceReuseMs?: number;
  /** Lifetime of the presence entry of a host whose channel a node holds, unless extended (default: presenceTtlOf). */
  presenceTtlMs?: number;
}

/**
 * A held host's presence entry lives three minutes unless its node extends it (every third of that).
 * Online and offline are its node's liveness key's to say (presence-redis.ts: a node that dies or
 * restarts takes its hosts offline within seconds, and a closed channel's entry is removed, the
 * removal retried until Redis takes it); the entry's own TTL only collects what a dead node left.
 * Extending every third of the heartbeat window cost each connected host 36 Redis commands a minute.
 */
export const PRESENCE_TTL_MS = 180_000;
export function presenceTtlOf(t: ChannelTiming): number {
  return t.presenceTtlMs ?? Math.max(PRESENCE_TTL_MS, t.heartbeatTimeoutMs);
}

export class HostChannels implements HostGateway, ChannelOwner {
  private readonly node: string;
  private readonly local = new Map<string, HostConnection>();
  /** Open sockets that have not said hello yet (closed by the sweep when too slow). */
  private readonly waiting = new PreHello();
  private readonly forwarding: RequestForwarding;
  private upHandlers: Array<(hostId: string, info: { running: string[] }) => void> = [];
  private downHandlers: Array<(hostId: string) => void> = [];
  private batchUpHandlers: Array<(hosts: Array<{ hostId: string; running: string[] }>) => void> = [];
  private upBatch: Array<{ hostId: string; running: string[] }> = [];
  private idleHandlers: Array<(hostId: string) => void> = [];
  /** One shared array per distinct engine list (thousands of hosts report the same one), and the rule for reports after the hello. */
  private readonly engineLists = new EngineLists();
  private readonly liveness: LivenessSweep;
  private unsubReconnect: () => void;
  private readonly unsubFrames: () => void;
  private closing = false;
  private readonly onHostMsg = (m: HostMsg) => this.hostMsg(m);
  private readonly limits: Limits;
  private readonly runs: ChannelRuns;
  private readonly upkeep: PresenceUpkeep;
  private readonly routing: HostRouting;
  private undeliveredHandlers: Array<(hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void> = [];

  constructor(
    private readonly ctx: HubContext,
    private readonly presenceStore: Presence,
    private readonly store: HostStore,
    readonly timing: ChannelTiming,
  ) {
    this.node = ctx.config.nodeId;
    this.limits = limitsOf(ctx.config);
    this.runs = new ChannelRuns(ctx.log, this.limits.channelHeldBytes, (fn) => this.safe(fn));
    this.upkeep = new PresenceUpkeep(presenceStore, this.node, presenceTtlOf(timing), () => [...this.local.keys()], () => this.closing, (fn) => this.safe(fn));
    this.routing = new HostRouting({
      bus: ctx.bus, node: this.node, presenceStore, read: (id) => this.presence(id), reuseMs: () => timing.presenceReuseMs ?? PRESENCE_REUSE_MS,
      here: this.onHostMsg, offline: (m) => this.forwarding.offline(m), undelivered: (m) => this.undelivered(m), closing: () => this.closing,
    });
    this.forwarding = new RequestForwarding(ctx.bus, this.node, (to, m) => this.routing.deliverTo(to, m));
    this.unsubFrames = subscribeObj<HostMsg>(ctx.bus, hostsTopic(this.node), this.onHostMsg);
    // A revoked host loses its socket on every node, including one still before hello.
    store.onRevoked = (hostId) => {
      this.local.get(hostId)?.close(CloseCodes.HOST_DELETED);
      for (const c of this.waiting.ofHost(hostId)) c.close(CloseCodes.HOST_DELETED);
    };
    store.liveHosts = () => [...this.local.keys(), ...this.waiting.hostIds()];
    this.unsubReconnect = ctx.bus.onReconnect(() => void this.upkeep.rebuild());
    this.liveness = new LivenessSweep(timing.heartbeatTimeoutMs, presenceTtlOf(timing), this.local, this.waiting, this.upkeep, store, (now) => this.forwarding.dropStale(now));
  }

  /** How often hosts should ping (sent in `welcome`). */
  get heartbeatMs(): number {
    return Math.max(1000, Math.floor(this.timing.heartbeatTimeoutMs / 3));
  }

  /** A socket authenticated as this host: the transport calls open() on it next. */
  connection(id: HostIdentity): HostConnection {
    return new HostConnection(this, id, new TokenBucket(this.limits.hostFramesPerSecond, this.limits.hostFrameBurst));
  }

  /** The transport opened the socket of `conn`. */
  opened(conn: HostConnection): void {
    // A host's oldest socket still waiting for hello gives way (PRE_HELLO_PER_HOST): the CLI reconnects after 4408.
    this.waiting.add(conn)?.close(CloseCodes.HELLO_TIMEOUT);
  }

  // ---------- ChannelOwner: what connections report ----------

  hello(conn: HostConnection, f: FrameOf<HostToHub, 'hello'>): void {
    const id = conn.hostId;
    this.waiting.delete(conn);
    const old = this.local.get(id);
    this.local.set(id, conn);
    this.ctx.log.info('host connected', { hostId: id, userId: conn.userId, name: f.name, cli: f.cli, v: f.v, capacity: f.capacity, running: f.running?.length ?? 0 });
    if (old && old !== conn) old.close(CloseCodes.REPLACED);
    const engines = this.engineLists.intern(f.engines);
    conn.engines = engines;
    const running = f.running ?? [];
    this.runs.hello(conn, running);
    void this.presenceStore.set(id, { nodeId: this.node, running: running.length, capacity: f.capacity, engines, lastSeenAt: Date.now() }, presenceTtlOf(this.timing))
      .then((w) => this.placed(conn, w), () => this.placed(conn, { prev: null, epoch: 0 }));
    this.store.recordHello(id, { name: f.name, cliVersion: f.cli, protocolVersion: f.v, engines, capacity: f.capacity }, conn.stored);
    conn.stored = undefined; // needed once; a channel holds no more than it must
    conn.send({ t: 'welcome', hostId: id, heartbeatMs: this.heartbeatMs, v: PROTOCOL_VERSION });
    for (const h of this.upHandlers) this.safe(() => h(id, { running }));
    if (this.batchUpHandlers.length && this.upBatch.push({ hostId: id, running }) === 1) {
      setImmediate(() => {
        const batch = this.upBatch.splice(0);
        for (const h of this.batchUpHandlers) this.safe(() => h(batch));
      });
    }
  }

  /**
   * The presence write of `conn`'s hello answered. A channel for the same host on another node gives
   * way to this one if its own write was earlier. Only a node whose entry this write replaced can hold
   * one (one that let the channel go removed its entry), so only then is a takeover published: a hello
   * costs no publish in a connect storm. The takeover carries the write's epoch, so that a late one
   * (the host has since come back to that node) cannot close a newer channel.
   */
  private placed(conn: HostConnection, { prev, epoch }: Written): void {
    conn.epoch = epoch;
    // Another node's later hello was heard before this write answered: this channel is the older one.
    // Its takeover still goes out: a channel older than this write may remain on a third node.
    if (conn.takenOverAt > epoch) conn.close(CloseCodes.REPLACED);
    if (prev) publishObj(this.ctx.bus, hostsTopic(prev), { k: 'takeover', h: conn.hostId, node: this.node, epoch } satisfies HostMsg);
  }

  /** Another node's hello took `conn`'s host over: `conn` gives way unless its own hello was the later. */
  private takenOver(conn: HostConnection, epoch: unknown): void {
    if (typeof epoch !== 'number') return conn.close(CloseCodes.REPLACED); // malformed: give way, the host reconnects
    if (conn.epoch === undefined) conn.takenOverAt = Math.max(conn.takenOverAt, epoch);
    else if (epoch > conn.epoch) conn.close(CloseCodes.REPLACED);
  }

  run(conn: HostConnection, f: RunFrame): void {
    this.runs.frame(conn, f);
  }

  setRunResolver(resolve: RunResolver): void {
    this.runs.setResolver(resolve);
  }

  setOpenRunsCheck(check: OpenRunsCheck): void {
    this.runs.setOpenCheck(check);
  }

  /** Run frames dropped on this node because their run is not bound to the sending channel. */
  get droppedRunFrames(): number {
    return this.runs.dropped;
  }

  reply(conn: HostConnection, f: FrameOf<HostToHub, 'reply'>): void {
    this.forwarding.reply(conn, f);
  }

  engines(conn: HostConnection, f: FrameOf<HostToHub, 'engines'>): void {
    this.updateEngines(conn.hostId, f.engines);
  }

  closed(conn: HostConnection): void {
    this.waiting.delete(conn);
    const id = conn.hostId;
    // Taken over: a newer channel (here or on another node) speaks for the host now.
    if (conn.closedWith === CloseCodes.REPLACED.code) this.ctx.log.info('host taken over', { hostId: id, code: conn.closeCode });
    else this.ctx.log.info('host disconnected', { hostId: id, code: conn.closeCode, hello: conn.ready });
    if (this.local.get(id) !== conn) return; // replaced, or never said hello
    this.local.delete(id);
    void this.presenceStore.remove(id, this.node);
    this.store.touch(id, conn.lastSeen);
    this.forwarding.gone(id);
    // Taken over by a newer channel on another node: the host is not down, its runs go on there.
    if (conn.closedWith === CloseCodes.REPLACED.code) return;
    for (const h of this.downHandlers) this.safe(() => h(id));
  }

  // ---------- Bus: frames for hosts whose channel is here ----------

  private hostMsg(m: HostMsg): void {
    if (m.k === 'forget') return this.routing.recent.forget(m.h);
    const conn = this.local.get(m.h);
    // Not held here: routed on once; a message routed on already has nowhere else to go.
    if (!conn && m.k !== 'takeover') return m.hop ? this.routing.nowhere(m) : void this.routing.routeOn(m);
    switch (m.k) {
      case 'send':
        if (!conn) return; // not reached: routed above
        if (m.frame.t === 'run.start') {
          if (!this.runs.starting(conn, m.frame.runId)) return; // sent again already
          // From another node's bus message: checked before it reaches the sessions domain.
          if (typeof m.meta?.agentId === 'string') for (const h of this.startingHandlers) this.safe(() => h(m.h, m.frame as FrameOf<HubToHost, 'run.start'>, { agentId: m.meta!.agentId }));
        }
        conn.send(m.frame);
        return;
      case 'req':
        return this.forwarding.deliver(conn, m);
      case 'takeover':
        // This node's own channels replace each other at hello; a takeover it published concerns other nodes only.
        if (conn && m.node !== this.node) this.takenOver(conn, m.epoch);
        return;
    }
  }

  /** A run.start no node could take (its host went offline after the sender read presence): the domain ends its run. */
  private undelivered(m: SendMsg): void {
    if (m.frame.t !== 'run.start' || typeof m.meta?.agentId !== 'string') return;
    for (const h of this.undeliveredHandlers) this.safe(() => h(m.h, m.frame as FrameOf<HubToHost, 'run.start'>, m.meta!));
  }

  // ---------- HostGateway ----------

  async presence(hostId: string): Promise<HostPresence> {
    return view(hostId, await this.presenceStore.get(hostId));
  }

  async presenceMany(hostIds: string[]): Promise<Map<string, HostPresence>> {
    const found = await this.presenceStore.getMany(hostIds);
    return new Map(hostIds.map((id) => [id, view(id, found.get(id))]));
  }

  async connected(hostIds: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    const rest = hostIds.filter((id) => !(this.local.has(id) && out.add(id)));
    if (!rest.length) return out;
    // An entry naming this node without a channel here is this node's own close, its removal not yet written.
    // The store unreachable: only this node's channels count, as the sweep would judge the rest later.
    const found = await this.presenceStore.getMany(rest).catch(() => new Map<string, PresenceEntry>());
    for (const [id, e] of found) if (e.nodeId && e.nodeId !== this.node) out.add(id);
    return out;
  }

  /** The raw presence entry (node, engines, counts), for the hosts service. */
  entries(hostIds: string[]): Promise<Map<string, PresenceEntry>> {
    return this.presenceStore.getMany(hostIds);
  }

  async send(hostId: string, frame: FrameOf<HubToHost, 'run.start' | 'run.abort'>, meta?: RunStartMeta, via?: string): Promise<void> {
    const m: HostMsg = { k: 'send', h: hostId, frame, from: this.node, ...(meta && frame.t === 'run.start' ? { meta } : {}) };
    // A channel held here: straight to it, with no presence look-up and no round trip through the Bus.
    if (this.local.has(hostId)) return this.hostMsg(m);
    // A node named by a presence read moments ago (the accept's): no second read, one Redis round trip
    // less per message whose host is on another node; if the host has moved since, that node routes on.
    this.routing.deliverTo(via ?? (await this.routing.holder(hostId)), m);
  }

  presenceToSend(hostId: string): SendPresence | Promise<SendPresence> {
    // A channel open here is online, also while its hello's look-up of open runs is in flight: presence names
    // this node then, which a reading takes for a channel closed here with its removal on its way (routing.ts).
    const c = this.local.get(hostId);
    return c?.socket ? { status: 'online', capacity: c.capacity } : this.routing.forSend(hostId);
  }

  onRunUndelivered(handler: (hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void): void {
    this.undeliveredHandlers.push(handler);
  }

  private startingHandlers: Array<(hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void> = [];
  onRunStarting(handler: (hostId: string, frame: FrameOf<HubToHost, 'run.start'>, meta: RunStartMeta) => void): void {
    this.startingHandlers.push(handler);
  }

  async request(hostId: string, frame: RequestFrame, timeoutMs = this.timing.requestTimeoutMs): Promise<unknown> {
    const to = this.local.has(hostId) ? this.node : await this.routing.holder(hostId);
    return this.forwarding.ask(hostId, to, frame, timeoutMs);
  }

  heldHosts(): string[] {
    const out: string[] = [];
    for (const [id, c] of this.local) if (this.runs.settled(c)) out.push(id);
    return out;
  }

  heldCapacity(hostId: string): number | undefined {
    const c = this.local.get(hostId);
    return c && this.runs.settled(c) ? c.capacity : undefined;
  }

  carries(hostId: string, runId: string): boolean {
    const c = this.local.get(hostId);
    return !!c && this.runs.carries(c, runId);
  }

  resend(hostId: string, frame: FrameOf<HubToHost, 'run.start'>): boolean {
    const c = this.local.get(hostId);
    return !!c && this.runs.resend(c, frame);
  }

  onRunFrame(handler: (hostId: string, frame: RunFrame) => void): void {
    this.runs.onRunFrame(handler);
  }
  onHostUp(handler: (hostId: string, info: { running: string[] }) => void): void {
    this.upHandlers.push(handler);
  }
  onHostsUp(handler: (hosts: Array<{ hostId: string; running: string[] }>) => void): void {
    this.batchUpHandlers.push(handler);
  }
  onHostDown(handler: (hostId: string) => void): void {
    this.downHandlers.push(handler);
  }
  onPresenceRestored(handler: (hostIds: string[]) => void): void {
    this.upkeep.onRestored(handler);
  }

  setRunning(hostId: string, running: number): void {
    void this.presenceStore.patch(hostId, { running: Math.max(0, running) });
    // Owed model settings are delivered when a host's runs drop to zero (model-configs).
    if (running <= 0) for (const h of this.idleHandlers) this.safe(() => h(hostId));
  }

  onIdle(handler: (hostId: string) => void): void {
    this.idleHandlers.push(handler);
  }

  /** New engine list from a host (frame or refresh reply): presence now, database batched; dropped as engine-lists.ts says. */
  updateEngines(hostId: string, engines: Engine[]): void {
    const conn = this.local.get(hostId);
    const list = this.engineLists.report(hostId, engines, conn?.engines);
    if (!list) return;
    if (conn) conn.engines = list;
    void this.presenceStore.patch(hostId, { engines: list });
    this.store.recordEngines(hostId, list);
  }

  /** Channels held by this node (bench and tests). */
  get size(): number {
    return this.local.size;
  }

  /** This node's channels for metrics (read at scrape time): sockets open, and of the hosts that said hello, online and busy. */
  async counts(): Promise<{ connected: number; online: number; busy: number }> {
    const ids = [...this.local.keys()];
    const entries = ids.length ? await this.presenceStore.getMany(ids) : new Map<string, PresenceEntry>();
    let online = 0;
    let busy = 0;
    for (const id of ids) {
      const v = view(id, entries.get(id));
      if (v.status === 'busy') busy++;
      else if (v.status === 'online') online++;
    }
    return { connected: this.local.size + this.waiting.size, online, busy };
  }

  private safe(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.ctx.log.error('host event handler failed', { err: e });
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.unsubReconnect();
    this.unsubFrames();
    this.liveness.close();
    for (const conn of [...this.local.values(), ...this.waiting]) conn.close(CloseCodes.GOING_AWAY);
    this.forwarding.close();
  }
}

function view(hostId: string, e: PresenceEntry | undefined): HostPresence {
  if (!e) return { hostId, status: 'offline', running: 0, capacity: 0, engines: [], lastSeenAt: null };
  return { hostId, status: e.running >= e.capacity ? 'busy' : 'online', running: e.running, capacity: e.capacity, engines: e.engines, lastSeenAt: e.lastSeenAt, ...(e.nodeId ? { nodeId: e.nodeId } : {}) };
}
