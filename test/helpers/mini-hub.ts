// A minimal hub for host CLI tests: one WebSocket server that judges each host
// frame as the real hub does (the frame limit, then decodeHostFrame) and closes
// the channel 4400 on one it would refuse, recording what it admitted; with
// `frameRate`, it also holds the channel to the hub's token bucket (4430 past it).
import { WebSocketServer, type WebSocket } from 'ws';
import { encodeFrame, decodeHostFrame, type HostToHub, type HubToHost } from '../../host-protocol/index.js';
import { FRAME_MAX_BYTES } from '../../host-protocol/limits.js';
import { Arrivals } from './waiters.js';
import { TokenBucket, limitsOf } from '../../src/limits.js';

export interface MiniHub {
  url: string;
  /** Frames admitted, in order, across connections. */
  frames: Arrivals<HostToHub>;
  /** Why a channel was closed for a frame the hub would refuse (empty while none was). */
  refused: string[];
  /** The open connection (the latest one). */
  socket(): WebSocket | undefined;
  send(f: HubToHost): void;
  close(): Promise<void>;
}

export interface MiniHubOptions {
  /** Sent in welcome (default 5000). */
  heartbeatMs?: number;
  /** Frames per second the hub admits per channel, as HOST_FRAMES_PER_SECOND (burst twice that). */
  frameRate?: number;
  /** Called for each admitted frame, after it is recorded. */
  onFrame?: (f: HostToHub, hub: MiniHub) => void;
}

export async function startMiniHub(opts: MiniHubOptions = {}): Promise<MiniHub> {
  const wss = new WebSocketServer({ port: 0, maxPayload: FRAME_MAX_BYTES });
  await new Promise((r) => wss.once('listening', r));
  let current: WebSocket | undefined;
  const hub: MiniHub = {
    url: `http://127.0.0.1:${(wss.address() as { port: number }).port}`,
    frames: new Arrivals<HostToHub>('mini hub: frame'),
    refused: [],
    socket: () => current,
    send: (f) => current?.send(encodeFrame(f)),
    close: () => {
      for (const c of wss.clients) c.terminate();
      return new Promise((r) => wss.close(() => r()));
    },
  };
  wss.on('connection', (ws) => {
    current = ws;
    const rate = opts.frameRate === undefined ? undefined : limitsOf({ hostFramesPerSecond: opts.frameRate, runOutputMaxBytes: 8 << 20 });
    const bucket = rate && new TokenBucket(rate.hostFramesPerSecond, rate.hostFrameBurst);
    ws.on('error', () => {}); // a frame over maxPayload closes 1009 on its own
    ws.on('close', (code) => code === 1009 && hub.refused.push('frame over the limit'));
    ws.on('message', (data: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      if (bucket && !bucket.take()) {
        hub.refused.push('too many frames');
        return ws.close(4430, 'too many frames');
      }
      const d = decodeHostFrame(data);
      if (d.error !== undefined) {
        hub.refused.push(d.error);
        return ws.close(4400, 'malformed frame');
      }
      hub.frames.push(d.frame);
      if (d.frame.t === 'hello') ws.send(encodeFrame({ t: 'welcome', hostId: 'hst_mini', heartbeatMs: opts.heartbeatMs ?? 5000, v: 1 }));
      if (d.frame.t === 'ping') ws.send(encodeFrame({ t: 'pong', id: d.frame.id, ts: d.frame.ts }));
      opts.onFrame?.(d.frame, hub);
    });
  });
  return hub;
}
