// The Bus's publishes on a connection of their own, written as RESP bytes:
// the publishes of one event-loop turn are one buffer, one socket write. Through
// ioredis each PUBLISH built a command object, a promise and a pipeline entry:
// 23 µs of CPU per publish at two per turn against 7 written directly, 10
// against 1.4–2 at twenty per turn (bench/RESULTS.md, thirty-first session), and
// a cluster node publishes each session event (each delta) once. Only PUBLISH is
// sent here, so every reply is one line (`:<readers>`, or `-<error>`); the
// connection's address and credentials are the command connection's (ioredis
// parses the URL). A node's publishes stay in one order, on one connection.
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../log.js';

export interface PublisherTarget {
  host?: string;
  port?: number;
  /** A Unix socket instead of host and port. */
  path?: string;
  family?: number;
  username?: string;
  password?: string;
  /** Connect with TLS (ioredis' `tls` option: `true` or TLS options). */
  tls?: tls.ConnectionOptions | boolean;
  connectTimeout?: number;
}

/** Bytes written and not yet taken by the socket past which a turn's publishes are dropped (Redis not keeping up). */
export const PUBLISH_BUFFER_MAX = 32 * 1024 * 1024;
/** While the connection is down, publishes are kept this long, and at most PUBLISH_BUFFER_MAX bytes, for the next connection. */
export const PUBLISH_HOLD_MS = 1000;
/** Reconnection delays, as ioredis' default: 50 ms more per attempt, at most 2 s. */
const retryDelay = (attempt: number) => Math.min(attempt * 50, 2000);

const CRLF = 0x0d0a;

export class RespPublisher {
  private socket?: net.Socket;
  /** Connected and its handshake answered: writes go straight to the socket. */
  private up = false;
  private closing = false;
  private attempts = 0;
  private retryTimer?: NodeJS.Timeout;
  /** Turns' buffers made while the connection was down: bytes, when made, publishes in them. */
  private held: Array<[Buffer, number, number]> = [];
  private heldBytes = 0;
  /** Replies still to come: the handshake's, then one per PUBLISH. */
  private pending = 0;
  private handshakeLeft = 0;
  private handshakeError?: string;
  private onHandshake?: (err?: Error) => void;
  /** Partial line of a reply split across reads (errors only need their text). */
  private line = '';
  private inLine = false;
  private isError = false;
  private drained: Array<() => void> = [];
  /** Publishes dropped (Redis down too long, or not keeping up) since the last `lost` call. */
  private droppedSince = 0;
  /** Publishes dropped in all. */
  dropped = 0;

  constructor(
    private readonly target: PublisherTarget,
    private readonly hooks: {
      log?: Logger;
      /** Called on every connection after the first, before anything held is written: the first write may announce it. */
      reconnected?: () => void;
      /** Called once publishes were dropped, when the connection can take writes again. */
      lost?: (count: number) => void;
      logError: (e: unknown) => void;
    },
  ) {}

  /** Connects; rejects when the server is unreachable or refuses the credentials. */
  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.open((err) => (err ? reject(err) : resolve()));
    });
  }

  get connected(): boolean {
    return this.up;
  }

  /** Publishes of one turn, in order, as one write: [channel with prefix, bytes]. */
  publishAll(batch: ReadonlyArray<readonly [string, Uint8Array]>): void {
    if (!batch.length || this.closing) return;
    const buf = encodePublishes(batch);
    if (this.up && this.socket) {
      if (this.socket.writableLength + buf.length > PUBLISH_BUFFER_MAX) return this.drop(batch.length, 'redis is not keeping up with publishes');
      this.pending += batch.length;
      this.socket.write(buf);
      return;
    }
    if (this.heldBytes + buf.length > PUBLISH_BUFFER_MAX) return this.drop(batch.length, 'redis is unreachable');
    this.held.push([buf, Date.now(), batch.length]);
    this.heldBytes += buf.length;
  }

  /** Resolves once every publish written so far is answered (or the connection is gone), at most `ms` later. */
  settled(ms = 1000): Promise<void> {
    if (!this.up || this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const drained = this.drained;
      function done() {
        clearTimeout(t);
        const i = drained.indexOf(done);
        if (i >= 0) drained.splice(i, 1);
        resolve();
      }
      drained.push(done);
    });
  }

  /** Sends what was written, waits for its answers (at most a second), and leaves. */
  async close(): Promise<void> {
    clearTimeout(this.retryTimer);
    await this.settled();
    this.closing = true;
    this.up = false;
    this.held = [];
    this.heldBytes = 0;
    const s = this.socket;
    this.socket = undefined;
    if (!s || s.destroyed) return;
    await new Promise<void>((resolve) => {
      s.once('close', () => resolve());
      s.end();
      setTimeout(() => s.destroy(), 500).unref?.();
    });
  }

  private drop(count: number, why: string): void {
    this.dropped += count;
    if (this.droppedSince === 0) {
      this.hooks.log?.warn('bus publishes dropped', { reason: why });
      // Connected but behind: once the socket has taken what it holds, say so (down: handshaken says it).
      const s = this.socket;
      if (this.up && s) s.once('drain', () => this.socket === s && this.up && this.reportLost());
    }
    this.droppedSince += count;
  }

  private reportLost(): void {
    if (this.droppedSince === 0) return;
    const n = this.droppedSince;
    this.droppedSince = 0;
    this.hooks.lost?.(n);
  }

  private open(handshake?: (err?: Error) => void): void {
    const t = this.target;
    const timeout = t.connectTimeout ?? 10_000;
    const opts = t.path ? { path: t.path } : { host: t.host ?? '127.0.0.1', port: t.port ?? 6379, family: t.family || undefined };
    const s = t.tls ? tls.connect({ ...(typeof t.tls === 'object' ? t.tls : {}), ...opts }) : net.connect(opts);
    this.socket = s;
    s.setNoDelay(true);
    // Until the handshake is answered: a server that takes the connection and never answers fails it too.
    s.setTimeout(timeout, () => s.destroy(new Error(`redis publisher: no answer within ${timeout} ms`)));
    this.pending = 0;
    this.line = '';
    this.inLine = false;
    this.onHandshake = handshake;
    s.once(t.tls ? 'secureConnect' : 'connect', () => {
      // The handshake's commands are answered before any publish written after them: no need to wait.
      const cmds: string[][] = [];
      if (t.password) cmds.push(t.username ? ['AUTH', t.username, t.password] : ['AUTH', t.password]);
      cmds.push(['CLIENT', 'SETNAME', 'hub-pub']);
      this.handshakeLeft = cmds.length;
      this.handshakeError = undefined;
      this.pending = cmds.length;
      s.write(Buffer.concat(cmds.map(encodeCommand)));
    });
    s.on('data', (chunk: Buffer) => this.replies(chunk));
    s.on('error', (e) => this.hooks.logError(e));
    s.on('close', () => this.closed(s));
  }

  /** Reads replies: one line each. Errors are logged (a handshake error fails the connection). */
  private replies(chunk: Buffer): void {
    let answered = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (!this.inLine) {
        this.inLine = true;
        this.isError = b === 0x2d; // '-'
        this.line = '';
      }
      if (b === 0x0a) {
        this.inLine = false;
        answered++;
        if (this.handshakeLeft > 0) {
          this.handshakeLeft--;
          if (this.isError) this.handshakeError ??= this.line.trim();
          if (this.handshakeLeft === 0) this.handshaken();
        } else if (this.isError) this.hooks.logError(new Error(`redis refused a publish: ${this.line.trim()}`));
      } else if (this.isError && this.line.length < 200) this.line += String.fromCharCode(b);
    }
    this.pending = Math.max(0, this.pending - answered);
    if (this.pending === 0 && this.drained.length) for (const r of this.drained.splice(0)) r();
  }

  private handshaken(): void {
    const s = this.socket!;
    s.setTimeout(0);
    const done = this.onHandshake;
    this.onHandshake = undefined;
    if (this.handshakeError) {
      const err = new Error(`redis publisher: ${this.handshakeError.replace(/^-/, '')}`);
      if (done) {
        this.closing = true; // connect() rejects: no retries
        s.destroy();
        return done(err);
      }
      this.hooks.logError(err);
      return void s.destroy();
    }
    const again = this.attempts > 0 || !done;
    this.attempts = 0;
    this.up = true;
    if (again) this.hooks.reconnected?.();
    const now = Date.now();
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const [buf, at, count] of held) {
      if (now - at > PUBLISH_HOLD_MS) {
        this.drop(count, 'redis was unreachable for longer than publishes are held');
        continue;
      }
      this.pending += count;
      s.write(buf);
    }
    // After a reconnection the announcement above already covers what was dropped.
    if (again) this.droppedSince = 0;
    else this.reportLost();
    done?.();
  }

  private closed(s: net.Socket): void {
    if (this.socket !== s) return;
    this.up = false;
    this.socket = undefined;
    this.pending = 0;
    for (const r of this.drained.splice(0)) r();
    const done = this.onHandshake;
    this.onHandshake = undefined;
    if (done) {
      // The first connection never came up: connect() rejects, nothing retries.
      this.closing = true;
      return done(new Error('redis publisher: connection failed'));
    }
    if (this.closing) return;
    this.retryTimer = setTimeout(() => this.open(), retryDelay(++this.attempts));
  }
}

/** RESP for one command of plain strings. */
function encodeCommand(args: string[]): Buffer {
  let s = '*' + args.length + '\r\n';
  for (const a of args) s += '$' + Buffer.byteLength(a) + '\r\n' + a + '\r\n';
  return Buffer.from(s);
}

const PUBLISH_HEAD = '*3\r\n$7\r\nPUBLISH\r\n$';

/** One buffer of PUBLISH commands: each channel's length is in bytes, so no channel name can break the framing. */
export function encodePublishes(batch: ReadonlyArray<readonly [string, Uint8Array]>): Buffer {
  let size = 0;
  const lens: number[] = [];
  for (const [channel, bytes] of batch) {
    const cl = Buffer.byteLength(channel);
    lens.push(cl);
    size += PUBLISH_HEAD.length + digits(cl) + 2 + cl + 2 + 1 + digits(bytes.length) + 2 + bytes.length + 2;
  }
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < batch.length; i++) {
    const [channel, bytes] = batch[i];
    at += buf.write(PUBLISH_HEAD + lens[i] + '\r\n', at, 'latin1');
    at += buf.write(channel, at, 'utf8');
    at += buf.write('\r\n$' + bytes.length + '\r\n', at, 'latin1');
    buf.set(bytes, at);
    at += bytes.length;
    at = buf.writeUInt16BE(CRLF, at);
  }
  return buf;
}

function digits(n: number): number {
  return n < 10 ? 1 : String(n).length;
}
