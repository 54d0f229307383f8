// One connection to Redis speaking RESP directly, for the Bus's publishing and
// subscribing connections (resp-publisher.ts, resp-subscriber.ts): it connects
// (TCP, TLS or a Unix socket, at the address ioredis parsed from the URL),
// authenticates and names itself, hands every byte after that handshake to its
// owner, and connects again after a drop with ioredis' delays (50 ms more per
// attempt, at most 2 s). A first connection that fails rejects `connect()` and
// is not retried: start-up fails, as with ioredis.
import net from 'node:net';
import tls from 'node:tls';

export interface RespTarget {
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

export interface RespConnectionHooks {
  logError(e: unknown): void;
  /** The handshake answered: the connection takes writes. `again`: not the first connection. */
  up(again: boolean): void;
  /** The connection is gone (a new one is on its way unless closing). */
  down(): void;
  /** Bytes after the handshake's replies. */
  data(chunk: Buffer): void;
}

const retryDelay = (attempt: number) => Math.min(attempt * 50, 2000);

export class RespConnection {
  private sock?: net.Socket;
  private isUp = false;
  private closing = false;
  private attempts = 0;
  private retryTimer?: NodeJS.Timeout;
  private handshakeLeft = 0;
  private handshakeError?: string;
  private readonly lines = new LineReplies();
  private first?: (err?: Error) => void;

  constructor(
    private readonly target: RespTarget,
    /** CLIENT SETNAME: what `CLIENT LIST` shows for it. */
    private readonly name: string,
    private readonly hooks: RespConnectionHooks,
  ) {}

  /** Connects; rejects when the server is unreachable, does not answer or refuses the credentials. */
  connect(): Promise<void> {
    return new Promise((resolve, reject) => this.open((err) => (err ? reject(err) : resolve())));
  }

  get up(): boolean {
    return this.isUp;
  }

  /** The current socket (undefined while down). */
  get socket(): net.Socket | undefined {
    return this.sock;
  }

  /** Writes when up; false (nothing written) otherwise. */
  write(buf: Buffer): boolean {
    if (!this.isUp || !this.sock) return false;
    this.sock.write(buf);
    return true;
  }

  /** Leaves: what was written is sent first; the socket is destroyed if it has not closed 500 ms later. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    this.isUp = false;
    const s = this.sock;
    this.sock = undefined;
    if (!s || s.destroyed) return;
    await new Promise<void>((resolve) => {
      s.once('close', () => resolve());
      s.end();
      setTimeout(() => s.destroy(), 500).unref?.();
    });
  }

  private open(first?: (err?: Error) => void): void {
    const t = this.target;
    const timeout = t.connectTimeout ?? 10_000;
    const where = t.path ? { path: t.path } : { host: t.host ?? '127.0.0.1', port: t.port ?? 6379, family: t.family || undefined };
    const s = t.tls ? tls.connect({ ...(typeof t.tls === 'object' ? t.tls : {}), ...where }) : net.connect(where);
    this.sock = s;
    this.first = first;
    this.lines.reset();
    s.setNoDelay(true);
    // Until the handshake is answered: a server that takes the connection and never answers fails it too.
    s.setTimeout(timeout, () => s.destroy(new Error(`redis: no answer within ${timeout} ms`)));
    s.once(t.tls ? 'secureConnect' : 'connect', () => {
      const cmds: string[][] = [];
      if (t.password) cmds.push(t.username ? ['AUTH', t.username, t.password] : ['AUTH', t.password]);
      cmds.push(['CLIENT', 'SETNAME', this.name]);
      this.handshakeLeft = cmds.length;
      this.handshakeError = undefined;
      s.write(Buffer.concat(cmds.map(encodeCommand)));
    });
    s.on('data', (chunk: Buffer) => this.read(s, chunk));
    s.on('error', (e) => this.hooks.logError(e));
    s.on('close', () => this.closed(s));
  }

  private read(s: net.Socket, chunk: Buffer): void {
    if (this.sock !== s) return;
    if (this.handshakeLeft === 0) return this.hooks.data(chunk);
    // The handshake's replies are one line each (+OK or -ERR …).
    const i = this.lines.read(chunk, (error) => {
      if (error !== undefined) this.handshakeError ??= error;
      if (--this.handshakeLeft > 0) return true;
      this.handshaken(s);
      return false;
    });
    if (i < chunk.length && this.isUp && this.sock === s) this.hooks.data(chunk.subarray(i));
  }

  private handshaken(s: net.Socket): void {
    const first = this.first;
    this.first = undefined;
    if (this.handshakeError) {
      const err = new Error(`redis: ${this.handshakeError}`);
      if (first) {
        this.closing = true; // connect() rejects: no retries
        s.destroy();
        return first(err);
      }
      this.hooks.logError(err);
      return void s.destroy();
    }
    s.setTimeout(0);
    const again = this.attempts > 0 || !first;
    this.attempts = 0;
    this.isUp = true;
    this.hooks.up(again);
    first?.();
  }

  private closed(s: net.Socket): void {
    if (this.sock !== s) return;
    const wasUp = this.isUp;
    this.isUp = false;
    this.sock = undefined;
    this.handshakeLeft = 0;
    const first = this.first;
    this.first = undefined;
    if (first) {
      // The first connection never came up: connect() rejects, nothing retries.
      this.closing = true;
      return first(new Error('redis: connection failed'));
    }
    if (wasUp) this.hooks.down();
    if (this.closing) return;
    this.retryTimer = setTimeout(() => this.open(), retryDelay(++this.attempts));
  }
}

/** RESP for one command of plain strings. */
export function encodeCommand(args: readonly string[]): Buffer {
  let s = '*' + args.length + '\r\n';
  for (const a of args) s += '$' + Buffer.byteLength(a) + '\r\n' + a + '\r\n';
  return Buffer.from(s);
}

/** Replies of one line each (`+OK`, `:<n>`, `-<error>`), split across reads anywhere; an error's text is kept (200 characters). */
export class LineReplies {
  private inLine = false;
  private isError = false;
  private text = '';

  /** Calls `line` for each complete reply in `chunk` (the error's text, or undefined) until it returns false; returns where it stopped. */
  read(chunk: Buffer, line: (error: string | undefined) => boolean): number {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (!this.inLine) {
        this.inLine = true;
        this.isError = b === 0x2d; // '-'
        this.text = '';
        continue;
      }
      if (b === 0x0a) {
        this.inLine = false;
        if (!line(this.isError ? this.text.trim() : undefined)) return i + 1;
      } else if (this.isError && this.text.length < 200) this.text += String.fromCharCode(b);
    }
    return chunk.length;
  }

  reset(): void {
    this.inLine = false;
  }
}

/** What the bus's publishing and subscribing connections share: a RespConnection they answer for. */
export abstract class RespUser {
  protected readonly conn: RespConnection;
  /** Where it connects: `host:port`, or the Unix socket's path. */
  readonly address: string;

  constructor(target: RespTarget, name: string, logError: (e: unknown) => void) {
    this.address = target.path ?? `${target.host ?? '127.0.0.1'}:${target.port ?? 6379}`;
    this.conn = new RespConnection(target, name, { logError, up: (again) => this.up(again), down: () => this.down(), data: (chunk) => this.data(chunk) });
  }

  /** Connects; rejects when the server is unreachable, does not answer or refuses the credentials. */
  connect(): Promise<void> {
    return this.conn.connect();
  }

  get connected(): boolean {
    return this.conn.up;
  }

  /** The socket (tests). */
  get socket() {
    return this.conn.socket;
  }

  protected abstract up(again: boolean): void;
  protected abstract down(): void;
  protected abstract data(chunk: Buffer): void;
}
