// How often one host may open its channel on a node. Each authenticated socket that says hello costs
// the hub a presence write, a look-up of the host's open runs, a drain of its queue and a row update:
// a CLI reconnecting after a drop does it once, but a script holding a credential could loop
// connect-hello-close as fast as its network allows and make the node's database do all of that each
// time. A fixed window per node (ratelimit/window-counter.ts): O(1) a connect, nothing kept after.
import { WindowCounter } from '../ratelimit/window-counter.js';

/** Sockets one host may open on a node per minute by default (HOST_CONNECTS_PER_MINUTE): a CLI on a flaky network reconnects once a second at most. */
export const CONNECTS_PER_HOST_PER_MINUTE = 60;
export const CONNECT_WINDOW_MS = 60_000;

export class ConnectRate {
  private readonly sockets: WindowCounter | undefined;

  constructor(
    /** Sockets per host per window; 0 = no limit. */
    limit = CONNECTS_PER_HOST_PER_MINUTE,
    windowMs = CONNECT_WINDOW_MS,
  ) {
    this.sockets = limit > 0 ? new WindowCounter(limit, windowMs) : undefined;
  }

  /** Counts one socket of `hostId`; the seconds to wait when it is over its share (nothing counted), else 0. */
  admit(hostId: string, now = Date.now()): number {
    if (!this.sockets || this.sockets.take(hostId, 1, now)) return 0;
    return Math.max(1, Math.ceil(this.sockets.msLeft(now) / 1000));
  }
}
