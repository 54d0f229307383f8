// Where a frame for host H goes when this node does not hold H's channel:
// to the node a presence read names, on that node's Bus topic (hostsTopic:
// one subscription per node, none per host). A send reuses a reading of the
// last moments (recent-presence.ts); a node that receives a frame for a host
// it no longer holds routes it on once to the node presence names then, and
// a run.start that no node can take is handed back to the domain at once
// (its run ends HOST_OFFLINE) instead of waiting for the lost-run sweep.
import type { FrameOf, HubToHost } from '../../host-protocol/frames.js';
import { publishObj, type Bus } from '../bus/bus.js';
import { fail } from '../errors.js';
import type { HostPresence, RunStartMeta } from './gateway.js';
import type { Presence } from './presence.js';
import type { RequestMsg } from './forwarding.js';
import { RecentPresence, type SendPresence } from './recent-presence.js';

export type SendMsg = {
  k: 'send';
  h: string;
  frame: FrameOf<HubToHost, 'run.start' | 'run.abort'>;
  meta?: RunStartMeta;
  /** Routed on once already by a node that no longer held the host (never twice). */
  hop?: number;
  /** The sending node: told to forget its reading of the host when the frame finds it elsewhere or nowhere. */
  from?: string;
};

export type HostMsg =
  | SendMsg
  | RequestMsg
  /** Sent by a hello whose presence write replaced another node's entry; `epoch` is that write's (Presence.set). */
  | { k: 'takeover'; h: string; node: string; epoch: number }
  /** To a node whose send found host `h` was not where its reading said: read presence again. */
  | { k: 'forget'; h: string };

/** The Bus topic of frames for the hosts whose channels `node` holds. */
export function hostsTopic(node: string): string {
  return `hostframes:${node}`;
}

/** A reading of another node's host is used for this long by sends (recent-presence.ts). */
export const PRESENCE_REUSE_MS = 1000;

export interface RoutingDeps {
  bus: Bus;
  node: string;
  presenceStore: Presence;
  /** A fresh presence reading of the host. */
  read(hostId: string): Promise<HostPresence>;
  /** How long a send reuses a reading (ms; 0: never). */
  reuseMs(): number;
  /** A message for this node's own channels. */
  here(m: HostMsg): void;
  /** A request whose host no node holds. */
  offline(m: RequestMsg): void;
  /** A run.start whose host no node holds. */
  undelivered(m: SendMsg): void;
  closing(): boolean;
}

export class HostRouting {
  readonly recent: RecentPresence;

  constructor(private readonly d: RoutingDeps) {
    this.recent = new RecentPresence(d.reuseMs);
  }

  /** To node `to`'s channels: straight in when that is this node, else over the Bus. */
  deliverTo(to: string, m: HostMsg): void {
    if (to === this.d.node) this.d.here(m);
    else publishObj(this.d.bus, hostsTopic(to), m);
  }

  /** Presence as a send needs it, of a host this node does not hold: a recent reading, else a fresh one (kept). */
  forSend(hostId: string): SendPresence | Promise<SendPresence> {
    return this.recent.get(hostId) ?? this.readForSend(hostId);
  }

  private async readForSend(hostId: string): Promise<SendPresence> {
    const p = await this.d.read(hostId);
    // Naming this node, which holds no channel of the host: that channel closed and its entry's removal is on its way.
    if (p.nodeId === this.d.node) return { status: 'offline', capacity: 0 };
    this.recent.keep(hostId, p);
    return p;
  }

  /** The node holding the host's channel, from a fresh reading; HOST_OFFLINE when none does. */
  async holder(hostId: string): Promise<string> {
    const e = await this.d.presenceStore.get(hostId);
    if (!e || e.nodeId === null) throw fail('HOST_OFFLINE');
    return e.nodeId;
  }

  /**
   * A frame or request for a host not held here: the host moved after the sender read presence.
   * Routed on once to the node presence names now. With nowhere to go, a request is answered offline
   * and a run.start handed back (its run ends at once); a run.abort is dropped. A presence store that
   * cannot be read leaves a run.start to the lost-run sweep, as before.
   */
  async routeOn(m: SendMsg | RequestMsg): Promise<void> {
    this.misread(m);
    let to: string | null | undefined;
    try {
      to = (await this.d.presenceStore.get(m.h))?.nodeId;
    } catch {
      if (m.k === 'req') this.d.offline(m);
      return;
    }
    if (to && to !== this.d.node && !this.d.closing()) return void publishObj(this.d.bus, hostsTopic(to), { ...m, hop: 1 } satisfies HostMsg);
    this.handBack(m);
  }

  /** A message routed on once already that did not find its host either. */
  nowhere(m: SendMsg | RequestMsg): void {
    this.misread(m);
    this.handBack(m);
  }

  /**
   * No node can take the message: a request is answered offline, a run.start handed back — except by
   * a closing node, whose domain is shutting down (the sweep of a live node judges that run).
   */
  private handBack(m: SendMsg | RequestMsg): void {
    if (m.k === 'req') this.d.offline(m);
    else if (m.frame.t === 'run.start' && !this.d.closing()) this.d.undelivered(m);
  }

  /** A send that reached a node not holding its host: its sender forgets the reading that sent it here. */
  private misread(m: SendMsg | RequestMsg): void {
    if (m.k !== 'send' || !m.from) return;
    if (m.from === this.d.node) this.recent.forget(m.h);
    else publishObj(this.d.bus, hostsTopic(m.from), { k: 'forget', h: m.h } satisfies HostMsg);
  }
}
