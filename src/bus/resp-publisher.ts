// The Bus's publishes on a connection of their own, written as RESP bytes:
// the publishes of one event-loop turn are one buffer, one socket write. Through
// ioredis each PUBLISH built a command object, a promise and a pipeline entry:
// 23.5 µs of CPU per publish at two per turn against 7.75 written directly, 9.5
// against 1.8 at twenty per turn (bench/redis-wire.ts), and
// a cluster node publishes each session event (each delta) once. Only PUBLISH is
// sent here, so every reply is one line (`:<readers>`, or `-<error>`). A node's
// publishes stay in one order, on one connection.
import type { Logger } from '../log.js';
import { LineReplies, RespUser, type RespTarget } from './resp-connection.js';

/** Bytes written and not yet taken by the socket past which a turn's publishes are dropped (Redis not keeping up). */
export const PUBLISH_BUFFER_MAX = 32 * 1024 * 1024;
/** While the connection is down, publishes are kept this long, and at most PUBLISH_BUFFER_MAX bytes, for the next connection. */
export const PUBLISH_HOLD_MS = 1000;

export class RespPublisher extends RespUser {
  private closing = false;
  /** Turns' buffers made while the connection was down: bytes, when made, publishes in them. */
  private held: Array<[Buffer, number, number]> = [];
  private heldBytes = 0;
  /** Replies still to come, one per PUBLISH written on this connection. */
  private pending = 0;
  private readonly lines = new LineReplies();
  private drained: Array<() => void> = [];
  /** Publishes dropped (Redis down too long, or not keeping up) since the last `lost` call. */
  private droppedSince = 0;
  /** Publishes dropped in all. */
  dropped = 0;

  constructor(
    target: RespTarget,
    private readonly hooks: {
      log?: Logger;
      /** Called on every connection after the first, before anything held is written: the first write may announce it. */
      reconnected?: () => void;
      /** Called once publishes were dropped, when the connection can take writes again. */
      lost?: (count: number) => void;
      logError: (e: unknown) => void;
    },
  ) {
    super(target, 'hub-pub', hooks.logError);
  }

  /** Publishes of one turn, in order, as one write: [channel with prefix, bytes]. */
  publishAll(batch: ReadonlyArray<readonly [string, Uint8Array]>): void {
    if (!batch.length || this.closing) return;
    const buf = encodePublishes(batch);
    const s = this.conn.socket;
    if (this.conn.up && s) {
      if (s.writableLength + buf.length > PUBLISH_BUFFER_MAX) return this.drop(batch.length, 'redis is not keeping up with publishes');
      this.pending += batch.length;
      this.conn.write(buf);
      return;
    }
    if (this.heldBytes + buf.length > PUBLISH_BUFFER_MAX) return this.drop(batch.length, 'redis is unreachable');
    this.held.push([buf, Date.now(), batch.length]);
    this.heldBytes += buf.length;
  }

  /** Resolves once every publish written so far is answered (or the connection is gone), at most `ms` later. */
  settled(ms = 1000): Promise<void> {
    if (!this.conn.up || this.pending === 0) return Promise.resolve();
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
    await this.settled();
    this.closing = true;
    this.held = [];
    this.heldBytes = 0;
    await this.conn.close();
  }

  private drop(count: number, why: string): void {
    this.dropped += count;
    if (this.droppedSince === 0) {
      this.hooks.log?.warn('bus publishes dropped', { reason: why });
      // Connected but behind: once the socket has taken what it holds, say so (down: `up` says it).
      const s = this.conn.socket;
      if (this.conn.up && s) s.once('drain', () => this.conn.socket === s && this.conn.up && this.reportLost());
    }
    this.droppedSince += count;
  }

  private reportLost(): void {
    if (this.droppedSince === 0) return;
    const n = this.droppedSince;
    this.droppedSince = 0;
    this.hooks.lost?.(n);
  }

  protected up(again: boolean): void {
    this.pending = 0;
    this.lines.reset();
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
      this.conn.write(buf);
    }
    // After a reconnection the announcement above already covers what was dropped.
    if (again) this.droppedSince = 0;
    else this.reportLost();
  }

  protected down(): void {
    this.pending = 0;
    for (const r of this.drained.splice(0)) r();
  }

  /** Reads replies: one line each; an error's text is logged. */
  protected data(chunk: Buffer): void {
    let answered = 0;
    this.lines.read(chunk, (error) => {
      answered++;
      if (error !== undefined) this.hooks.logError(new Error(`redis refused a publish: ${error}`));
      return true;
    });
    this.pending = Math.max(0, this.pending - answered);
    if (this.pending === 0 && this.drained.length) for (const r of this.drained.splice(0)) r();
  }
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
    at = buf.writeUInt16BE(0x0d0a, at);
  }
  return buf;
}

function digits(n: number): number {
  return n < 10 ? 1 : String(n).length;
}
