// The host's end of the channel: one WebSocket to the hub, hello on every
// connect, app-level pings, and reconnection with jittered exponential
// backoff. Frames from the hub go to one handler each (see handlers.ts).
import WebSocket from 'ws';
import { decode } from '@msgpack/msgpack';
import { encodeFrame, decodeHubFrame, type HostToHub, type HubToHost } from '../../host-protocol/index.js';
import { CloseCodes, HOST_WS_PATH, PROTOCOL_VERSION, closeCodeInfo } from '../../host-protocol/version.js';
import { ReplyCodes, type Engine } from '../../host-protocol/frames.js';
import { CLI_VERSION } from './version.js';
import { Outbox } from './outbox.js';
import { ARRAY_MAX_ITEMS, FRAME_MAX_BYTES, HOST_FRAMES_PER_SECOND_DEFAULT, MAP_MAX_KEYS, STR_MAX_BYTES } from '../../host-protocol/limits.js';

/** A frame this CLI cannot read is decoded only for its `id`, within the same bounds as any frame. */
const UNKNOWN_FRAME_LIMITS = { maxStrLength: STR_MAX_BYTES, maxBinLength: STR_MAX_BYTES, maxArrayLength: ARRAY_MAX_ITEMS, maxMapLength: MAP_MAX_KEYS, maxExtLength: 0 };

export interface ChannelOptions {
  hub: string;
  credential: string;
  name: string;
  capacity: number;
  engines: () => Engine[];
  /** runIds still executing, reported in hello after a reconnect. */
  running: () => string[];
  onFrame: (f: HubToHost, channel: Channel) => void;
  status: (line: string) => void;
  /** The channel came up (after welcome) or went down (with why). */
  onUp?: (hostId: string) => void;
  onDown?: (why: string) => void;
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/**
 * The outbox is flushed this many frames a tick: half the hub's default frame rate, so a flush after
 * an outage never trips its limit (which closes the channel with every run on it).
 */
const FLUSH_INTERVAL_MS = 100;
const FLUSH_BATCH = (HOST_FRAMES_PER_SECOND_DEFAULT / 2) * (FLUSH_INTERVAL_MS / 1000);
/**
 * Longest ping interval the host keeps, whatever welcome.heartbeatMs says: Node runs a setInterval of
 * 2^31 ms or more every millisecond. Pinging more often than asked is always safe (the hub answers each).
 */
export const HEARTBEAT_MAX_MS = 60_000;
export const pingIntervalMs = (heartbeatMs: number) => Math.min(heartbeatMs, HEARTBEAT_MAX_MS);
/** Close codes after which this credential will never work again (host or account deleted, credential revoked). */
const PAIR_AGAIN = new Set<number>([CloseCodes.UNAUTHORIZED.code, CloseCodes.HOST_DELETED.code]);

export class Channel {
  private ws: WebSocket | undefined;
  private attempt = 0;
  private pingTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastHeard = 0;
  private pingId = 0;
  private ready = false;
  private stopped = false;
  private readonly outbox = new Outbox();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly pongWaiters = new Map<number, () => void>();
  private finished!: (reason: { code: number; message: string }) => void;
  /** Resolves when the channel stops for good (stop(), or a close code that says not to reconnect). */
  readonly done = new Promise<{ code: number; message: string }>((r) => (this.finished = r));

  constructor(private readonly opts: ChannelOptions) {}

  start(): void {
    this.opts.status(`connecting to ${this.opts.hub} …`);
    this.connect();
  }

  /**
   * Resolves true once every frame sent so far has reached the hub: the outbox is empty and a
   * ping sent after them is answered (the hub handles a channel's frames in order). False when
   * that did not happen within `timeoutMs` (the hub unreachable).
   */
  async flushed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stopped && Date.now() < deadline) {
      if (this.ready && !this.outbox.length && this.ws?.readyState === WebSocket.OPEN) {
        const id = ++this.pingId;
        const answered = await new Promise<boolean>((res) => {
          const timer = setTimeout(() => (this.pongWaiters.delete(id), res(false)), Math.max(0, Math.min(2000, deadline - Date.now())));
          this.pongWaiters.set(id, () => (clearTimeout(timer), res(true)));
          this.send({ t: 'ping', id, ts: Date.now() });
        });
        if (answered) return true;
      } else await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  /**
   * Sends now, or queues the frame behind those still waiting (in order: a reply to run.abort must
   * follow the run's end). Pings and pongs skip the queue and, like replies, are dropped while down.
   * `bytes`, when given, are `f` already encoded (a run's frames are encoded once, to be judged).
   */
  send(f: HostToHub, bytes?: Uint8Array): void {
    const open = this.ready && this.ws?.readyState === WebSocket.OPEN;
    const heartbeat = f.t === 'ping' || f.t === 'pong';
    if (open && (heartbeat || !this.outbox.length)) this.ws!.send(bytes ?? encodeFrame(f));
    else if (open || (!heartbeat && f.t !== 'reply')) this.outbox.push(f);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    clearTimeout(this.flushTimer);
    this.ws?.close(1000);
    this.finished({ code: 0, message: 'stopped' });
  }

  private connect(): void {
    if (this.stopped) return;
    const url = this.opts.hub.replace(/^http/, 'ws').replace(/\/+$/, '') + HOST_WS_PATH;
    // maxPayload: a hub frame past the frame bound is refused by the socket (ws's default takes 100 MiB).
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.opts.credential}` }, perMessageDeflate: false, handshakeTimeout: 15_000, maxPayload: FRAME_MAX_BYTES });
    this.ws = ws;
    this.ready = false;
    let refused: number | undefined;
    let netError: string | undefined;
    ws.on('unexpected-response', (_req, res) => {
      refused = res.statusCode;
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      this.lastHeard = Date.now();
      ws.send(encodeFrame({ t: 'hello', v: PROTOCOL_VERSION, cli: CLI_VERSION, name: this.opts.name, capacity: this.opts.capacity, engines: this.opts.engines(), running: this.opts.running() }));
    });
    ws.on('message', (data: Buffer) => this.receive(data));
    // 'close' follows and decides; the error (ECONNREFUSED 127.0.0.1:8080, ENOTFOUND…) says why.
    ws.on('error', (e) => void (netError ??= e.message));
    ws.on('close', (code, reason) => {
      clearInterval(this.pingTimer);
      const wasReady = this.ready;
      this.ready = false;
      if (this.stopped || this.ws !== ws) return;
      this.opts.onDown?.(refused ? `HTTP ${refused}` : netError ?? `closed ${code}`);
      if (refused === 401) return this.end(4401, 'the hub refused the credential (host deleted or revoked); pair again');
      const info = closeCodeInfo(code);
      if (!info.reconnect) return this.end(code, `${info.reason} (${code})${PAIR_AGAIN.has(code) ? '; pair again' : ''}`);
      if (wasReady) this.attempt = 0;
      const delay = this.backoff();
      const closed = `${code}${reason.length ? ' ' + reason.toString() : info.reason ? ' ' + info.reason : ''}`;
      const why = refused ? `HTTP ${refused}` : !netError ? closed : wasReady ? `${closed}: ${netError}` : netError;
      this.opts.status(`${wasReady ? 'disconnected from' : 'could not connect to'} ${this.opts.hub} (${why}); reconnecting in ${(delay / 1000).toFixed(1)}s`);
      this.retryTimer = setTimeout(() => this.connect(), delay);
    });
  }

  /** Full jitter: a random delay between half and all of the capped exponential step. */
  private backoff(): number {
    const step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** this.attempt++);
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  private end(code: number, message: string): void {
    this.stopped = true;
    this.opts.status(`disconnected: ${message}`);
    this.finished({ code, message });
  }

  private receive(data: Buffer): void {
    this.lastHeard = Date.now();
    const d = decodeHubFrame(data);
    if (d.error !== undefined) return this.unknown(data);
    const f = d.frame;
    switch (f.t) {
      case 'welcome':
        return this.welcome(f.hostId, pingIntervalMs(f.heartbeatMs));
      case 'ping':
        return this.send({ t: 'pong', id: f.id, ts: f.ts });
      case 'pong':
        this.pongWaiters.get(f.id)?.();
        this.pongWaiters.delete(f.id);
        return;
      default:
        this.opts.onFrame(f, this);
    }
  }

  /** A frame this CLI does not know: a request among them is answered `unsupported` (the hub reads "too old"). */
  private unknown(data: Buffer): void {
    let id: unknown;
    try {
      id = (decode(data, UNKNOWN_FRAME_LIMITS) as { id?: unknown })?.id;
    } catch {
      return;
    }
    if (Number.isInteger(id) && (id as number) > 0) this.send({ t: 'reply', id: id as number, ok: false, code: ReplyCodes.UNSUPPORTED, error: 'frame not supported by this agent-host version' });
  }

  /** Sends the queue a batch a tick while the channel is up; frames sent meanwhile queue behind it. */
  private flush(): void {
    clearTimeout(this.flushTimer);
    if (!this.ready || this.ws?.readyState !== WebSocket.OPEN) return; // the next welcome resumes
    for (const f of this.outbox.take(FLUSH_BATCH)) this.ws.send(encodeFrame(f));
    if (this.outbox.length) this.flushTimer = setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }

  private welcome(hostId: string, heartbeatMs: number): void {
    this.ready = true;
    this.attempt = 0;
    const engines = this.opts.engines().map((e) => e.id).join(', ') || 'no engines';
    this.opts.status(`connected to ${this.opts.hub} as ${hostId} (${engines}; capacity ${this.opts.capacity})`);
    this.opts.onUp?.(hostId);
    this.flush();
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      // The hub answers every ping: three beats of silence mean the connection is dead.
      if (Date.now() - this.lastHeard > heartbeatMs * 3) return this.ws?.terminate();
      this.send({ t: 'ping', id: ++this.pingId, ts: Date.now() });
    }, heartbeatMs);
  }
}
