// What a send needs to know of a host whose channel another node holds (that
// it is online, its capacity, the node holding it), kept for a short while
// after a presence read: a burst of messages for one host then costs one
// Redis round trip, not one per message. Only online readings are kept (a
// host that comes online is seen at the next send). A reading kept too long
// does no harm beyond its window: the node it names routes a frame on when
// the host has moved, and ends a run.start at once as HOST_OFFLINE when no
// node holds the host any more (routing.ts).
import type { HostStatus } from './gateway.js';

export interface SendPresence {
  status: HostStatus;
  capacity: number;
  /** The node holding the host's channel at the reading. */
  nodeId?: string;
}

interface Kept extends SendPresence {
  at: number;
}

export class RecentPresence {
  private readonly kept = new Map<string, Kept>();

  constructor(
    /** How long a reading is used (0: never kept); a change applies to the readings kept already. */
    private readonly ttlMs: () => number,
    /** Readings kept at most; the oldest goes first. */
    private readonly max = 20_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(hostId: string): SendPresence | undefined {
    const k = this.kept.get(hostId);
    if (!k) return undefined;
    if (this.now() - k.at < this.ttlMs()) return k;
    this.kept.delete(hostId);
    return undefined;
  }

  /** Keeps a reading of a host online on another node (`nodeId`); anything else is not kept. */
  keep(hostId: string, p: SendPresence): void {
    if (this.ttlMs() <= 0 || p.status === 'offline' || !p.nodeId) return;
    this.kept.delete(hostId); // re-inserted last: the oldest reading is always first
    if (this.kept.size >= this.max) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(hostId, { status: p.status, capacity: p.capacity, nodeId: p.nodeId, at: this.now() });
  }

  forget(hostId: string): void {
    this.kept.delete(hostId);
  }

  get size(): number {
    return this.kept.size;
  }
}
