// The Bus's subscriptions on a connection of their own, read as RESP
// directly: each message reaches the handler as the channel's name and a view
// of its payload's bytes in the buffer the socket read, with no reply object,
// no event emitter and no copy in between. A cluster node reads every session
// event it has a reader for (each delta) here: 1.67 µs of CPU per 180-byte
// message against 3.11 through ioredis (bench/redis-wire.ts).
// The channels wanted are kept; after a reconnection they are subscribed again
// and `resubscribed` runs once Redis has acknowledged them all (what ioredis'
// autoResubscribe and a PING behind it did).
import { RespUser, encodeCommand, type RespTarget } from './resp-connection.js';

/** Channels per SUBSCRIBE when subscribing everything again after a reconnection. */
const RESUBSCRIBE_CHUNK = 1000;

interface Pending {
  /** Acknowledgements still to come (one per channel named). */
  left: number;
  done: () => void;
}

const MESSAGE = Buffer.from('message');
/** Elements of a push this connection reads (a message has 3); more is not a reply to anything it sent. */
const MAX_ELEMENTS = 8;

/** The length or count a RESP header line holds (-1: null), or throws when it is not one. */
function count(buf: Buffer, start: number, end: number, max: number): number {
  const text = buf.toString('latin1', start, end);
  const n = Number(text);
  if (!/^(-1|\d{1,10})$/.test(text) || n > max) throw new Error(`redis subscriber: not a RESP length: ${JSON.stringify(text.slice(0, 20))}`);
  return n;
}

export class RespSubscriber extends RespUser {
  private readonly channels = new Set<string>();
  /** SUBSCRIBE and UNSUBSCRIBE commands written and not yet fully acknowledged, in the order written. */
  private pending: Pending[] = [];
  /** Bytes read and not yet parsed (a reply split across reads). */
  private rest?: Buffer;
  /** Reads held until `need` bytes are there (a large payload arriving in many reads is joined once). */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private need = 0;

  constructor(
    target: RespTarget,
    private readonly hooks: {
      logError: (e: unknown) => void;
      message: (channel: string, payload: Uint8Array) => void;
      /** After a reconnection: every channel wanted is subscribed again. */
      resubscribed: () => void;
    },
  ) {
    super(target, 'hub-sub', hooks.logError);
  }

  /** Resolves once Redis has acknowledged these channels, or at once while the connection is down (they are subscribed when it is back). */
  subscribe(...channels: string[]): Promise<void> {
    for (const c of channels) this.channels.add(c);
    return this.command('SUBSCRIBE', channels);
  }

  unsubscribe(...channels: string[]): Promise<void> {
    for (const c of channels) this.channels.delete(c);
    return this.command('UNSUBSCRIBE', channels);
  }

  close(): Promise<void> {
    this.channels.clear();
    this.down();
    return this.conn.close();
  }

  private command(verb: string, channels: string[]): Promise<void> {
    if (!channels.length || !this.conn.up) return Promise.resolve();
    return new Promise((done) => {
      this.pending.push({ left: channels.length, done });
      this.conn.write(encodeCommand([verb, ...channels]));
    });
  }

  protected up(again: boolean): void {
    this.rest = undefined;
    this.parts = [];
    this.partsBytes = 0;
    this.need = 0;
    if (!again) return;
    const all = [...this.channels];
    const acks: Array<Promise<void>> = [];
    for (let i = 0; i < all.length; i += RESUBSCRIBE_CHUNK) acks.push(this.command('SUBSCRIBE', all.slice(i, i + RESUBSCRIBE_CHUNK)));
    void Promise.all(acks).then(() => this.conn.up && this.hooks.resubscribed());
  }

  /** The connection is gone: nothing waits for acknowledgements it will not get. */
  protected down(): void {
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) p.done();
  }

  protected data(chunk: Buffer): void {
    let buf: Buffer;
    if (this.rest) {
      this.parts.push(chunk);
      this.partsBytes += chunk.length;
      if (this.rest.length + this.partsBytes < this.need) return;
      buf = Buffer.concat([this.rest, ...this.parts]);
      this.parts = [];
      this.partsBytes = 0;
    } else buf = chunk;
    let at = 0;
    try {
      while (at < buf.length) {
        const end = this.reply(buf, at);
        if (end < 0) {
          this.need = -end;
          break;
        }
        at = end;
      }
    } catch (e) {
      // Bytes that are not RESP: nothing after them can be trusted. A new connection subscribes everything again.
      this.hooks.logError(e);
      this.rest = undefined;
      return void this.conn.socket?.destroy();
    }
    this.rest = at < buf.length ? buf.subarray(at) : undefined;
  }

  /**
   * Parses and handles one reply at `at`: returns where it ends, or minus the bytes (from `at`) it
   * needs at least when it is not all there yet.
   */
  private reply(buf: Buffer, at: number): number {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) return -(buf.length - at + 1);
    const type = buf[at];
    if (type === 0x2d) {
      // An error: a command refused (e.g. an ACL without the channel); it answers for that whole command.
      this.hooks.logError(new Error(`redis refused a subscription command: ${buf.toString('latin1', at + 1, Math.min(nl - 1, at + 200))}`));
      this.pending.shift()?.done();
      return nl + 1;
    }
    if (type !== 0x2a) return nl + 1; // not a push or an acknowledgement: nothing this connection asked for
    const n = count(buf, at + 1, nl - 1, MAX_ELEMENTS);
    // Elements: bulk strings (start, end) or integers; kept in locals (three at most are read).
    let p = nl + 1;
    let kindStart = -1;
    let kindEnd = -1;
    let chanStart = -1;
    let chanEnd = -1;
    let lastStart = -1;
    let lastEnd = -1;
    for (let k = 0; k < n; k++) {
      if (p >= buf.length) return -(p - at + 1);
      const eol = buf.indexOf(0x0a, p);
      if (eol < 0) return -(buf.length - at + 1);
      let s = p;
      let e = p;
      if (buf[p] === 0x24) {
        const len = count(buf, p + 1, eol - 1, Infinity);
        s = eol + 1;
        e = len < 0 ? s : s + len;
        p = len < 0 ? eol + 1 : e + 2;
        if (p > buf.length) return -(p - at);
      } else {
        s = p + 1;
        e = eol - 1;
        p = eol + 1;
      }
      if (k === 0) (kindStart = s), (kindEnd = e);
      else if (k === 1) (chanStart = s), (chanEnd = e);
      else (lastStart = s), (lastEnd = e);
    }
    const kindLen = kindEnd - kindStart;
    if (kindLen === 7 && buf.compare(MESSAGE, 0, 7, kindStart, kindEnd) === 0 && n === 3) {
      try {
        this.hooks.message(buf.toString('utf8', chanStart, chanEnd), new Uint8Array(buf.buffer, buf.byteOffset + lastStart, lastEnd - lastStart));
      } catch (e) {
        this.hooks.logError(e); // a failing handler is not a broken connection
      }
    } else if (kindLen === 9 || kindLen === 11) {
      // subscribe / unsubscribe: one per channel named by the command at the head.
      const head = this.pending[0];
      if (head && --head.left === 0) {
        this.pending.shift();
        head.done();
      }
    }
    return p;
  }
}
