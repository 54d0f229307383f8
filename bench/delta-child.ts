// The delta bench's load generators, each in a process of its own (started by
// bench/delta-load.ts), so neither shares an event loop with the other or with
// the bench, and the server's cost is what the latency measures. The same code
// serves the hub and the bare fan-out (its `target`).
//   BENCH_DELTA_ROLE=producer: holds the hub's host channels of the running
//     turns (fake hosts it connects with their credentials) and one producer
//     WebSocket per stream to the fan-out; sends run.delta frames open loop.
//   BENCH_DELTA_ROLE=reader: SSE readers of both servers; the latency of each
//     delta is its receipt minus its send time, carried as the delta text.
// The send time is wall-clock ms with sub-ms precision (performance.timeOrigin +
// performance.now()), the same clock in every process of the machine.
// IPC (advanced serialization):
//   producer ← {t: 'hosts', url, credentials}   → {t: 'hosts-ready'}, then {t: 'run', i, runId, sessionId} per run.start
//   producer ← {t: 'fanout', url, n}             → {t: 'fanout-ready'}
//   producer ← {t: 'phase', target, rate, seconds, tickMs} → {t: 'sent', sent, elapsed, loop}
//   producer ← {t: 'end'}                        run.end for every run held → {t: 'ended'}
//   reader   ← {t: 'open', target, streams}      → {t: 'opened'}
//   reader   ← {t: 'start', target}              counts only deltas sent from now → {t: 'started'}
//   reader   ← {t: 'drain', target, sent}        waits while deltas arrive → {t: 'latencies', lat: Float64Array, loop}
import { get as httpGet } from 'node:http';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import WebSocket from 'ws';
import { connectFakeHost, type FakeHost } from '../test/helpers/host.js';
import { decodeHubFrame, encodeFrame } from '../host-protocol/index.js';

export type Target = 'hub' | 'fanout';
export interface LoopDelay { p99: number; max: number }
export interface Stream { url: string; headers: Record<string, string> }

/** Wall-clock ms, sub-ms precision: comparable across the processes of one machine. */
const ORIGIN = performance.timeOrigin;
const wallNow = () => ORIGIN + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const yieldTurn = () => new Promise((r) => setImmediate(r));
const send = (m: object) => process.send!(m);
/** A histogram's nanoseconds as milliseconds, 2 decimals. */
const ms = (ns: number) => Math.round(ns / 1e4) / 100;
const loopOf = (h: IntervalHistogram): LoopDelay => ({ p99: ms(h.percentile(99)), max: ms(h.max) });

// ---------- producer ----------

/** One stream's sender: frames of one tick go out in one write (the socket corked around them). */
interface Sender { ws: WebSocket; runId: string }
const hosts: FakeHost[] = [];
const hubRuns: string[] = [];
const fanout: WebSocket[] = [];

const socketOf = (ws: WebSocket) => (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;

function senders(target: Target): Sender[] {
  if (target === 'hub') return hosts.map((h, i) => ({ ws: h.ws, runId: hubRuns[i] }));
  return fanout.map((ws, i) => ({ ws, runId: hubRuns[i] ?? `run-${i}` }));
}

/** Open-loop deltas at `rate` spread over the senders, sent every `tickMs`. */
async function phase(target: Target, rate: number, seconds: number, tickMs: number) {
  const list = senders(target);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let sent = 0;
  // Ticks of tickMs: an engine streams its deltas continuously, not in 10 ms bursts of 200.
  const perTick = Math.max(1, Math.round((rate / list.length) * (tickMs / 1000)));
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const due = start + (sent / rate) * 1000;
    const now = performance.now();
    // Behind schedule, still yield once a tick, so the sockets are served.
    await (due > now ? sleep(Math.max(0, due - now)) : yieldTurn());
    for (const s of list) {
      const sock = socketOf(s.ws);
      sock.cork();
      for (let k = 0; k < perTick; k++) s.ws.send(encodeFrame({ t: 'run.delta', runId: s.runId, text: String(wallNow()) }));
      sock.uncork();
      sent += perTick;
    }
  }
  const elapsed = (performance.now() - start) / 1000;
  loop.disable();
  send({ t: 'sent', sent, elapsed, loop: loopOf(loop) });
}

async function producer(m: any): Promise<void> {
  if (m.t === 'hosts') {
    for (const credential of m.credentials as string[]) {
      const i = hosts.length;
      const h = await connectFakeHost(m.url, credential, { capacity: 1, heartbeat: true });
      h.ws.on('message', (data: Buffer) => {
        const f = decodeHubFrame(data).frame;
        if (f?.t !== 'run.start') return;
        hubRuns[i] = f.runId;
        send({ t: 'run', i, runId: f.runId, sessionId: f.sessionId });
      });
      hosts.push(h);
    }
    send({ t: 'hosts-ready' });
  } else if (m.t === 'fanout') {
    for (let i = 0; i < m.n; i++) {
      fanout.push(await new Promise<WebSocket>((res, rej) => {
        const ws = new WebSocket(`${m.url.replace('http', 'ws')}/produce/${i}`, { perMessageDeflate: false });
        ws.once('open', () => res(ws));
        ws.once('error', rej);
      }));
    }
    send({ t: 'fanout-ready' });
  } else if (m.t === 'phase') {
    await phase(m.target, m.rate, m.seconds, m.tickMs);
  } else if (m.t === 'end') {
    hosts.forEach((h, i) => hubRuns[i] && h.send({ t: 'run.end', runId: hubRuns[i], ok: true }));
    await sleep(200);
    send({ t: 'ended' });
  }
}

// ---------- reader ----------

interface Sink { lat: number[]; since: number }
const sinks: Record<Target, Sink> = { hub: { lat: [], since: Infinity }, fanout: { lat: [], since: Infinity } };
const readers: Array<() => void> = [];
let readerLoop: IntervalHistogram | undefined;

/** An SSE reader on node:http, not fetch: web streams cost the reader's loop several times more per chunk. */
function sseReader(s: Stream, sink: Sink): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = httpGet(s.url, { headers: s.headers, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${s.url}: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const now = wallNow();
        buf += chunk;
        const cut = buf.lastIndexOf('\n\n');
        if (cut < 0) return;
        const done = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        // Each message.delta frame carries its send time as the delta text.
        for (let i = done.indexOf('"delta":"'); i >= 0; i = done.indexOf('"delta":"', i + 9)) {
          const v = Number(done.slice(i + 9, done.indexOf('"', i + 9)));
          if (Number.isFinite(v) && v >= sink.since) sink.lat.push(now - v);
        }
      });
      res.on('error', () => undefined);
      resolve(() => req.destroy());
    });
    req.on('error', reject);
  });
}

async function reader(m: any): Promise<void> {
  const sink = sinks[m.target as Target];
  if (m.t === 'open') {
    for (const s of m.streams as Stream[]) readers.push(await sseReader(s, sink));
    send({ t: 'opened' });
  } else if (m.t === 'start') {
    sink.lat = [];
    sink.since = wallNow();
    readerLoop = monitorEventLoopDelay({ resolution: 1 });
    readerLoop.enable();
    send({ t: 'started' });
  } else if (m.t === 'drain') {
    // The phase's sending is over: the loop window ends here, then wait while deltas still arrive (at most 5 s).
    readerLoop?.disable();
    const loop = readerLoop ? loopOf(readerLoop) : { p99: NaN, max: NaN };
    for (let last = -1, i = 0; i < 25 && sink.lat.length < m.sent && sink.lat.length !== last; i++) {
      last = sink.lat.length;
      await sleep(200);
    }
    send({ t: 'latencies', lat: Float64Array.from(sink.lat), loop });
  }
}

const role = process.env.BENCH_DELTA_ROLE;
const handle = role === 'producer' ? producer : reader;
process.on('message', (m: any) => {
  if (m.t === 'close') {
    for (const stop of readers) stop();
    for (const h of hosts) h.close();
    for (const ws of fanout) ws.close();
    return void setTimeout(() => process.exit(0), 50);
  }
  handle(m).catch((e) => {
    console.error(`delta ${role}:`, e);
    process.exit(1);
  });
});
process.on('disconnect', () => process.exit(0)); // the bench died: do not linger
send({ t: 'ready' });
