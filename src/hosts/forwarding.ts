// Requests to a host wherever its channel is. The asking node opens a pending
// request (requests.ts) and routes it to the node holding H's channel (the
// gateway's route: straight in when that is this node, else on that node's
// Bus topic); the holder sends it on under an id of its own and carries the
// host's reply back on `hostreply:<asking node>`, or straight to the pending
// request when it asked itself. A channel that closes answers its forwarded
// requests `lost` at once rather than by timeout.
import type { FrameOf, HostToHub, HubToHost } from '../../host-protocol/frames.js';
import { publishObj, subscribeObj, type Bus } from '../bus/bus.js';
import type { RequestFrame } from './gateway.js';
import type { HostConnection } from './connection.js';
import { PendingRequests, type ReplyMsg } from './requests.js';

/** A request on its way to the node holding host `h`'s channel. */
export type RequestMsg = { k: 'req'; h: string; node: string; rid: number; frame: RequestFrame; hop?: number; ttl?: number };

/** A forward with no reply is forgotten this long after its asker gave up (`ttl`, its timeout), at the latest after 5 minutes
 * (a message without `ttl`, from an older node): a host that answers nothing must not pile up entries here. */
const FORWARD_MAX_AGE_MS = 5 * 60_000;
const FORWARD_GRACE_MS = 5_000;

interface Forward {
  hostId: string;
  node: string;
  rid: number;
  /** When to forget it unanswered (epoch ms). */
  until: number;
}

export class RequestForwarding {
  private pending = new PendingRequests();
  /** Requests sent on a channel here, by the id the host replies with. */
  private forwards = new Map<number, Forward>();
  private nextForward = 0;
  private unsubReply: () => void;

  constructor(
    private readonly bus: Bus,
    private readonly node: string,
    /** Takes a request to node `to`, which holds its host's channel. */
    private readonly route: (to: string, m: RequestMsg) => void,
  ) {
    this.unsubReply = subscribeObj<ReplyMsg>(bus, `hostreply:${node}`, (m) => this.pending.settle(m));
  }

  /** Asking side: routes the request to node `to`, which holds the host's channel; resolves with the reply's data. */
  ask(hostId: string, to: string, frame: RequestFrame, timeoutMs: number): Promise<unknown> {
    const { rid, result } = this.pending.open(timeoutMs, frame.t === 'settings.apply');
    this.route(to, { k: 'req', h: hostId, node: this.node, rid, frame, ttl: timeoutMs });
    return result;
  }

  /** Holding side: a request for a host, sent on its channel here (`conn`, undefined when none). */
  deliver(conn: HostConnection | undefined, m: RequestMsg): void {
    if (!conn) return this.offline(m);
    const id = ++this.nextForward;
    const ttl = typeof m.ttl === 'number' && m.ttl >= 0 ? Math.min(m.ttl + FORWARD_GRACE_MS, FORWARD_MAX_AGE_MS) : FORWARD_MAX_AGE_MS;
    this.forwards.set(id, { hostId: m.h, node: m.node, rid: m.rid, until: Date.now() + ttl });
    conn.send({ ...m.frame, id } as HubToHost);
  }

  /** The request's host has no channel here nor anywhere it could be routed to. */
  offline(m: RequestMsg): void {
    this.answer(m.node, { rid: m.rid, ok: false, code: 'offline' });
  }

  /** The host replied on its channel: back to the node that asked. */
  reply(conn: HostConnection, f: FrameOf<HostToHub, 'reply'>): void {
    const fwd = this.forwards.get(f.id);
    if (!fwd || fwd.hostId !== conn.hostId) return; // late or foreign id: ignore
    this.forwards.delete(f.id);
    // The host's code is one of its ReplyCodes; 'offline' and 'lost' are the hub's own words.
    const code = f.code === 'offline' || f.code === 'lost' ? undefined : f.code;
    this.answer(fwd.node, { rid: fwd.rid, ok: f.ok, data: f.data, error: f.error, code });
  }

  /** The host's channel here closed: its forwarded requests fail now (they went out: the host may have done them). */
  gone(hostId: string): void {
    for (const [fid, fwd] of this.forwards) {
      if (fwd.hostId !== hostId) continue;
      this.forwards.delete(fid);
      this.answer(fwd.node, { rid: fwd.rid, ok: false, code: 'lost' });
    }
  }

  /** Forgets forwards the host never answered and their askers gave up on. */
  dropStale(now: number): void {
    for (const [id, f] of this.forwards) if (now > f.until) this.forwards.delete(id);
  }

  /** Requests sent on channels here and not yet answered. */
  get inFlight(): number {
    return this.forwards.size;
  }

  close(): void {
    this.unsubReply();
    this.pending.close();
  }

  private answer(node: string, msg: ReplyMsg): void {
    if (node === this.node) return this.pending.settle(msg); // asked here: no round trip through the Bus
    publishObj(this.bus, `hostreply:${node}`, msg);
  }
}
