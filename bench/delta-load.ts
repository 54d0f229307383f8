// The parent's side of bench/delta-child.ts: forks the delta producer and the
// SSE reader process(es) and runs one open-loop phase against the hub or the
// bare fan-out, the same way for both.
import { fork, type ChildProcess } from 'node:child_process';
import type { LoopDelay, Stream, Target } from './delta-child.js';

export type { LoopDelay, Stream, Target };

interface Child {
  proc: ChildProcess;
  /** The next message tagged `t` (messages of other tags go to `on`). */
  next<T = any>(t: string): Promise<T>;
  on(t: string, cb: (m: any) => void): void;
  close(): Promise<void>;
}

async function forkChild(role: 'producer' | 'reader'): Promise<Child> {
  const proc = fork(new URL('./delta-child.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_DELTA_ROLE: role },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced', // the latencies come back as one Float64Array
  });
  const waiting = new Map<string, Array<(m: any) => void>>();
  const listeners = new Map<string, (m: any) => void>();
  proc.on('message', (m: any) => {
    const w = waiting.get(m.t)?.shift();
    if (w) w(m);
    else listeners.get(m.t)?.(m);
  });
  const exited = new Promise<never>((_, rej) => proc.once('exit', (c) => rej(new Error(`delta ${role} exited: ${c}`))));
  exited.catch(() => undefined);
  const next = <T>(t: string) => Promise.race([exited, new Promise<T>((res) => {
    const list = waiting.get(t) ?? [];
    list.push(res);
    waiting.set(t, list);
  })]);
  await next('ready');
  return {
    proc, next,
    on: (t, cb) => void listeners.set(t, cb),
    close: () => new Promise((res) => {
      if (proc.exitCode !== null) return res();
      proc.once('exit', () => res());
      proc.send({ t: 'close' });
    }),
  };
}

export interface PhaseFigure {
  sent: number;
  elapsed: number;
  lat: Float64Array;
  loop: { producer: LoopDelay; reader: LoopDelay };
}

export class DeltaLoad {
  private constructor(private readonly producer: Child, private readonly readers: Child[]) {}

  /** The producer and `readers` SSE reader processes (BENCH_DELTA_READERS, default 1). */
  static async start(readers = Number(process.env.BENCH_DELTA_READERS ?? 1)): Promise<DeltaLoad> {
    const p = await forkChild('producer');
    const rs = await Promise.all(Array.from({ length: Math.max(1, readers) }, () => forkChild('reader')));
    return new DeltaLoad(p, rs);
  }

  /** Connects the hub's hosts in the producer; `onRun` gets each run.start they receive. */
  async hosts(wsUrl: string, credentials: string[], onRun: (r: { i: number; runId: string; sessionId: string }) => void): Promise<void> {
    this.producer.on('run', onRun);
    this.producer.proc.send({ t: 'hosts', url: wsUrl, credentials });
    await this.producer.next('hosts-ready');
  }

  /** Opens `n` producer WebSockets to the bare fan-out. */
  async fanout(url: string, n: number): Promise<void> {
    this.producer.proc.send({ t: 'fanout', url, n });
    await this.producer.next('fanout-ready');
  }

  /** Opens a target's SSE streams, spread over the reader processes. */
  async open(target: Target, streams: Stream[]): Promise<void> {
    await Promise.all(this.readers.map((r, k) => {
      r.proc.send({ t: 'open', target, streams: streams.filter((_, i) => i % this.readers.length === k) });
      return r.next('opened');
    }));
  }

  /** One open-loop phase; `around` is told when sending starts and ends (the server's loop window). */
  async phase(target: Target, rate: number, seconds: number, tickMs: number, around?: { before(): Promise<unknown>; after(): Promise<unknown> }): Promise<PhaseFigure> {
    await Promise.all(this.readers.map((r) => (r.proc.send({ t: 'start', target }), r.next('started'))));
    await around?.before();
    this.producer.proc.send({ t: 'phase', target, rate, seconds, tickMs });
    const s = await this.producer.next<{ sent: number; elapsed: number; loop: LoopDelay }>('sent');
    await around?.after();
    const got = await Promise.all(this.readers.map((r) => (r.proc.send({ t: 'drain', target, sent: Math.ceil(s.sent / this.readers.length) }), r.next<{ lat: Float64Array; loop: LoopDelay }>('latencies'))));
    const lat = new Float64Array(got.reduce((n, g) => n + g.lat.length, 0));
    let at = 0;
    for (const g of got) (lat.set(g.lat, at), (at += g.lat.length));
    // The worst reader's loop stands for the readers.
    const reader = got.reduce((w, g) => (g.loop.p99 > w.p99 ? g.loop : w), got[0].loop);
    return { sent: s.sent, elapsed: s.elapsed, lat, loop: { producer: s.loop, reader } };
  }

  /** Ends the hub's running turns. */
  async end(): Promise<void> {
    this.producer.proc.send({ t: 'end' });
    await this.producer.next('ended');
  }

  async close(): Promise<void> {
    await Promise.all([this.producer, ...this.readers].map((c) => c.close()));
  }
}
