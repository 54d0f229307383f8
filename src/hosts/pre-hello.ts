// Sockets authenticated as a host that have not said `hello` yet, on this node. The liveness sweep
// closes one that stays silent for the heartbeat window; until then it holds an open file and a
// connection object. A credential is one host's, and a host needs one channel, so each host may
// hold only a few such sockets here: a newer one closes the oldest. Otherwise one owner's script
// could open sockets faster than the window closes them and take the node's files from every host.
import type { HostConnection } from './connection.js';

/** Sockets one host may hold on a node before hello: a CLI's reconnect, with room for a stale attempt or two. */
export const PRE_HELLO_PER_HOST = 4;

export class PreHello implements Iterable<HostConnection> {
  private readonly all = new Set<HostConnection>();
  /**
   * Each host's waiting sockets, oldest first: the socket itself while it is the only one (the usual
   * case, no array per connect in a storm), a few in an array otherwise.
   */
  private readonly byHost = new Map<string, HostConnection | HostConnection[]>();

  constructor(private readonly perHost = PRE_HELLO_PER_HOST) {}

  get size(): number {
    return this.all.size;
  }

  [Symbol.iterator](): IterableIterator<HostConnection> {
    return this.all.values();
  }

  /** Adds `conn`; when its host now holds more than its share, the oldest is taken out and returned for the caller to close. */
  add(conn: HostConnection): HostConnection | undefined {
    this.all.add(conn);
    const held = this.byHost.get(conn.hostId);
    if (held === undefined) return void this.byHost.set(conn.hostId, conn);
    const list = Array.isArray(held) ? held : [held];
    if (list !== held) this.byHost.set(conn.hostId, list);
    list.push(conn);
    if (list.length <= this.perHost) return undefined;
    const oldest = list.shift()!;
    this.all.delete(oldest);
    return oldest;
  }

  /** Takes `conn` out (it said hello or closed); false when it was not waiting. */
  delete(conn: HostConnection): boolean {
    if (!this.all.delete(conn)) return false;
    const held = this.byHost.get(conn.hostId)!;
    if (!Array.isArray(held)) this.byHost.delete(conn.hostId);
    else {
      held.splice(held.indexOf(conn), 1);
      if (held.length === 1) this.byHost.set(conn.hostId, held[0]);
    }
    return true;
  }

  /** The host's waiting sockets (a copy: closing them changes the set). */
  ofHost(hostId: string): HostConnection[] {
    const held = this.byHost.get(hostId);
    return held === undefined ? [] : Array.isArray(held) ? [...held] : [held];
  }

  /** Hosts with a socket waiting here. */
  hostIds(): string[] {
    return [...this.byHost.keys()];
  }
}
