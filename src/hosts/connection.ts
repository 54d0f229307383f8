// One host's channel on this node. The transport hands it decoded frames
// (`handle`) and tells it when the socket drains or closes; it answers with
// one handler per frame type. It holds no timers and no closures: liveness
// is judged by the node's single sweep (see channels.ts) from `lastSeen`.
import { encodeFrame, type Engine, type FrameOf, type HostToHub, type HubToHost } from '../../host-protocol/index.js';
import { pingToPong } from '../../host-protocol/ping.js';
import { CloseCodes, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, type CloseCode } from '../../host-protocol/version.js';
import type { HostIdentity } from './store.js';
import type { RunFrame } from './gateway.js';
import type { TokenBucket } from '../limits.js';

/** The three verbs a connection needs from its socket (a uWS WebSocket has them). */
export interface Socket {
  send(message: Uint8Array, isBinary: boolean): number;
  getBufferedAmount(): number;
  end(code: number, reason: string): void;
}

/** What a connection reports to the node that owns it. */
export interface ChannelOwner {
  hello(conn: HostConnection, frame: FrameOf<HostToHub, 'hello'>): void;
  run(conn: HostConnection, frame: FrameOf<HostToHub, 'run.init' | 'run.delta' | 'run.message' | 'run.end'>): void;
  reply(conn: HostConnection, frame: FrameOf<HostToHub, 'reply'>): void;
  engines(conn: HostConnection, frame: FrameOf<HostToHub, 'engines'>): void;
  closed(conn: HostConnection): void;
}

/** Above this many buffered bytes, frames wait in the connection's queue until `drain`. */
const HIGH_WATER = 256 * 1024;
/** A host that lets this much pile up is not reading: close it (it reconnects). */
const QUEUE_LIMIT = 8 * 1024 * 1024;

type Handler = (c: HostConnection, f: any) => void;
const HANDLERS: Record<HostToHub['t'], Handler> = {
  hello: (c, f: FrameOf<HostToHub, 'hello'>) => {
    if (c.ready) return c.close(CloseCodes.HELLO_TWICE);
    if (f.v < MIN_PROTOCOL_VERSION || f.v > PROTOCOL_VERSION) return c.close(CloseCodes.VERSION);
    c.ready = true;
    c.capacity = f.capacity;
    c.owner.hello(c, f);
  },
  ping: (c, f: FrameOf<HostToHub, 'ping'>) => c.send({ t: 'pong', id: f.id, ts: f.ts }),
  pong: () => {},
  reply: (c, f) => c.owner.reply(c, f),
  engines: (c, f) => c.owner.engines(c, f),
  'run.init': (c, f) => c.owner.run(c, f),
  'run.delta': (c, f) => c.owner.run(c, f),
  'run.message': (c, f) => c.owner.run(c, f),
  'run.end': (c, f) => c.owner.run(c, f),
};

export class HostConnection {
  readonly hostId: string;
  readonly userId: string;
  /** The hello the host row held at this channel's credential check, when a database lookup served it (HostIdentity.stored); dropped at the hello. */
  stored?: string;
  socket: Socket | null = null;
  /** Unix ms of the last frame received. */
  lastSeen = Date.now();
  /** This channel's place in the liveness sweep's order of arrival, which deals it its slices (liveness.ts); -1 until its first sweep. */
  sweepOrder = -1;
  /** hello accepted. */
  ready = false;
  /** Runs the host said it takes at once (its hello). */
  capacity = 0;
  /** The engine list last taken from this channel (interned: an unchanged report is the same array). */
  engines: Engine[] | undefined = undefined;
  /**
   * The epoch of this channel's presence write (see Presence.set): a takeover from a later write
   * replaces it, an earlier one does not. Undefined until the write answers.
   */
  epoch: number | undefined = undefined;
  /** The latest takeover epoch received while `epoch` was unknown, judged when it is known. */
  takenOverAt = 0;
  /** Close code the hub chose, once it closes this channel (0 while open or closed by the host). */
  closedWith = 0;
  /** Close code of the socket once closed, whoever closed it (the log line). */
  closeCode = 0;
  private queue: Uint8Array[] | null = null;
  private queued = 0;
  /**
   * Runs this channel may speak for: those sent to it (`run.start`) and, after a hello, those the
   * database holds open on this host. Run frames for any other run are dropped (channel-runs.ts).
   * Made on first use, as is `resent`: most channels are idle, and an empty Set is ~100 bytes each.
   */
  runs: Set<string> | null = null;
  /** Runs whose run.start this channel got again from the node's reconciliation (a late first one is dropped). */
  resent: Set<string> | null = null;
  /** Run frames received while this channel's runs were being looked up after hello (null: not looking). */
  held: RunFrame[] | null = null;
  heldBytes = 0;
  /** Run frames dropped on this channel (for runs it may not speak for). */
  dropped = 0;
  /** When the database was last asked which of `runs` are still open (channel-runs.ts). */
  runsCheckedAt = 0;

  constructor(
    readonly owner: ChannelOwner,
    id: HostIdentity,
    /** Frames per second this channel may send; over it the channel is closed (FRAME_RATE). */
    private readonly bucket?: TokenBucket,
  ) {
    this.hostId = id.hostId;
    this.userId = id.userId;
    this.stored = id.stored;
  }

  open(socket: Socket): void {
    this.socket = socket;
    this.lastSeen = Date.now();
  }

  handle(frame: HostToHub): void {
    if (this.admit(frame.t)) HANDLERS[frame.t](this, frame);
  }

  /**
   * A ping in the CLI's plain form (host-protocol/ping.ts), as the transport received it: answered
   * as `handle` would answer it, with its own bytes turned into the pong (borrowed for this call only).
   */
  heartbeat(ping: Uint8Array): void {
    if (this.admit('ping')) this.sendBytes(pingToPong(ping), true);
  }

  /** Every frame counts as a sign of life and against the frame rate; before hello, only a hello is taken. */
  private admit(t: HostToHub['t']): boolean {
    this.lastSeen = Date.now();
    const refused = this.bucket && !this.bucket.take(this.lastSeen) ? CloseCodes.FRAME_RATE : !this.ready && t !== 'hello' ? CloseCodes.HELLO_TWICE : undefined;
    if (refused) this.close(refused);
    return !refused;
  }

  /** Sends now, or queues behind backpressure. False once the socket is gone. */
  send(frame: HubToHost): boolean {
    return this.sendBytes(encodeFrame(frame), false);
  }

  /** `borrowed`: bytes valid for this call only (a transport's receive buffer), copied when they must wait. */
  private sendBytes(bytes: Uint8Array, borrowed: boolean): boolean {
    const s = this.socket;
    if (!s) return false;
    if (this.queue || s.getBufferedAmount() > HIGH_WATER) {
      if (borrowed) bytes = bytes.slice();
      (this.queue ??= []).push(bytes);
      this.queued += bytes.byteLength;
      if (this.queued > QUEUE_LIMIT) this.close(CloseCodes.BACKPRESSURE);
      return true;
    }
    s.send(bytes, true);
    return true;
  }

  /** The socket drained: send what waited, as far as the buffer allows. */
  drain(): void {
    const s = this.socket;
    const q = this.queue;
    if (!s || !q) return;
    let i = 0;
    while (i < q.length && s.getBufferedAmount() <= HIGH_WATER) {
      this.queued -= q[i].byteLength;
      s.send(q[i++], true);
    }
    q.splice(0, i);
    if (!q.length) this.queue = null;
  }

  close(code: CloseCode): void {
    const s = this.socket;
    if (!s) return;
    this.closedWith = code.code;
    s.end(code.code, code.reason); // uWS calls the close handler synchronously → closed()
  }

  /** The transport saw the socket close, with this code (the hub's own when it closed it). */
  closed(code = 0): void {
    if (!this.socket) return;
    this.closeCode = this.closedWith || code;
    this.socket = null;
    this.queue = null;
    this.held = null;
    this.owner.closed(this);
  }
}
