// A lean host-channel client for benches that open tens of thousands of
// channels: the WebSocket upgrade written by hand on a net.Socket and frames
// parsed in place. With the tests' `ws` client (test/helpers/host.ts: an
// http.ClientRequest, a random key and its SHA-1 check per handshake) the
// floor of bench/hosts-cluster.ts, the same clients against bare uWS servers,
// took 28–34 s for 60,000 hosts on a 2-core machine: the load generator, not
// the server, set the connect time. With this one it took 14–26 s.
// Speaks only what the channel benches need: hello → welcome, app-level
// pings both ways, terminate (no close frame). Not a general WebSocket
// client: no fragmentation, no extensions, server frames only.
import { connect, type Socket } from 'node:net';
import { encodeFrame, decodeHubFrame, PROTOCOL_VERSION, type HostToHub, type HubToHost } from '../host-protocol/index.js';
import { CLAUDE_ENGINE } from '../test/helpers/host.js';

/** What every raw host says in its hello beside its name (bench/hosts.ts seeds rows that hold it already). */
export const RAW_HELLO = { cli: 'raw-0.0.1', v: PROTOCOL_VERSION, engines: [CLAUDE_ENGINE] } as const;

export interface RawHost {
  hostId?: string;
  heartbeatMs?: number;
  /** When the upgrade's 101 arrived (performance.now()). */
  openedAt?: number;
  readonly open: boolean;
  send(f: HostToHub): void;
  /** An app-level ping's round trip in ms. */
  ping(): Promise<number>;
  /** The socket goes without a close frame (a crashed host). */
  terminate(): void;
}

export interface RawHostOptions {
  localAddress?: string;
  /** Sends a ping every heartbeatMs after the welcome (as the reference CLI does); false for none. */
  heartbeat?: boolean;
  name?: string;
}

// Any 16 bytes, base64: the server answers with its hash, which this client does not check.
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const MASK = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);

/** One masked binary frame (clients must mask; any key does). */
function frame(payload: Uint8Array): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const b = Buffer.allocUnsafe(head + 4 + n);
  b[0] = 0x82;
  if (n < 126) b[1] = 0x80 | n;
  else if (n < 65_536) (b[1] = 0x80 | 126), b.writeUInt16BE(n, 2);
  else (b[1] = 0x80 | 127), b.writeBigUInt64BE(BigInt(n), 2);
  MASK.copy(b, head);
  for (let i = 0; i < n; i++) b[head + 4 + i] = payload[i]! ^ MASK[i & 3]!;
  return b;
}

/** Connects, upgrades, says hello and resolves at the welcome. `url`: ws://host:port/path. */
export function connectRawHost(url: string, credential: string, opts: RawHostOptions = {}): Promise<RawHost> {
  const u = new URL(url);
  const sock: Socket = connect({ host: u.hostname, port: Number(u.port), localAddress: opts.localAddress, noDelay: true });
  let upgraded = false;
  let buf: Buffer = Buffer.alloc(0);
  /** The close frame's code and reason, when the hub sent one. */
  let closedWith: string | undefined;
  let pingId = 0;
  let timer: NodeJS.Timeout | undefined;
  const pings = new Map<number, () => void>();
  let onWelcome: ((f: { hostId: string; heartbeatMs: number }) => void) | undefined;
  const host: RawHost = {
    get open() {
      return upgraded && !sock.destroyed;
    },
    send(f) {
      if (host.open) sock.write(frame(encodeFrame(f)));
    },
    ping() {
      const id = ++pingId;
      const t0 = performance.now();
      return new Promise((res) => {
        pings.set(id, () => res(performance.now() - t0));
        host.send({ t: 'ping', id, ts: Date.now() });
      });
    },
    terminate() {
      clearInterval(timer);
      sock.destroy();
    },
  };
  const onFrame = (payload: Buffer) => {
    const d = decodeHubFrame(payload);
    if (d.error !== undefined) return;
    const f: HubToHost = d.frame;
    if (f.t === 'pong') {
      pings.get(f.id)?.();
      pings.delete(f.id);
    } else if (f.t === 'ping') host.send({ t: 'pong', id: f.id, ts: f.ts });
    else if (f.t === 'welcome') onWelcome?.(f);
  };
  /** Parses whole server frames off the buffer (unmasked; a close frame ends the socket). */
  const frames = () => {
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0]! & 0x0f;
      let n = buf[1]! & 0x7f;
      let at = 2;
      if (n === 126) {
        if (buf.length < 4) return;
        n = buf.readUInt16BE(2);
        at = 4;
      } else if (n === 127) {
        if (buf.length < 10) return;
        n = Number(buf.readBigUInt64BE(2));
        at = 10;
      }
      if (buf.length < at + n) return;
      const payload = buf.subarray(at, at + n);
      buf = buf.subarray(at + n);
      if (op === 0x2) onFrame(payload);
      else if (op === 0x8) {
        // Its code and reason say why the hub closed (reported by a connect that fails).
        closedWith = payload.length >= 2 ? `${payload.readUInt16BE(0)} ${payload.subarray(2).toString()}`.trim() : 'no code';
        return void sock.end();
      }
    }
  };
  return new Promise((resolve, reject) => {
    const fail = (e: Error) => {
      clearInterval(timer);
      sock.destroy();
      reject(e);
    };
    sock.once('error', fail);
    // Which side ended it and when, for a failure seen once in tens of runs: the hub's FIN ('end') or this side, how long after the 101.
    let finAt: number | undefined;
    sock.once('end', () => (finAt = performance.now()));
    sock.once('close', () => {
      clearInterval(timer);
      const after = (t: number) => `${Math.round(t - (host.openedAt ?? t))} ms after the 101`;
      const how = closedWith ? ` (${closedWith})` : !upgraded ? ' (no upgrade)' : finAt !== undefined ? ` (the hub's FIN ${after(finAt)}, no close frame, ${buf.length} bytes unparsed)` : ` (closed here ${after(performance.now())})`;
      reject(new Error(`closed before welcome${how}`));
    });
    sock.once('connect', () => {
      sock.write(
        `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${credential}\r\n\r\n`,
      );
    });
    onWelcome = (w) => {
      host.hostId = w.hostId;
      host.heartbeatMs = w.heartbeatMs;
      if (opts.heartbeat !== false) {
        timer = setInterval(() => host.send({ t: 'ping', id: ++pingId, ts: Date.now() }), w.heartbeatMs);
        timer.unref();
      }
      resolve(host);
    };
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = buf.subarray(0, buf.indexOf('\r\n')).toString('latin1');
        if (!/^HTTP\/1\.1 101 /.test(status)) return fail(Object.assign(new Error(`upgrade refused: ${status.slice(9, 12)}`), { status: Number(status.slice(9, 12)) }));
        upgraded = true;
        host.openedAt = performance.now();
        buf = buf.subarray(end + 4);
        host.send({ t: 'hello', v: RAW_HELLO.v, cli: RAW_HELLO.cli, name: opts.name ?? 'raw', capacity: 1, engines: [...RAW_HELLO.engines] });
      }
      frames();
    });
  });
}
