// The parent's side of bench/hub-child.ts: starts a hub in a process of its
// own and talks to it over IPC. Used by bench/dispatch.ts (one hub) and
// bench/cross-node.ts (two nodes on one database and one Redis).
import { fork } from 'node:child_process';
import { call } from '../test/helpers/nodes.js';
import type { Profiler } from './miss-profile.js';
import type { Profile } from './profile-summary.js';

export interface LoopDelay {
  p99: number;
  max: number;
}

/** A child hub's memory in bytes: RSS, JS heap + external, V8's committed heap and, of it, the young generation. */
export interface Stats {
  rss: number;
  heap: number;
  heapCommitted: number;
  newSpace: number;
}

/** What a bench needs of a hub, wherever it runs. */
export interface BenchHub {
  url: string;
  /** The bench user's API key (unset for a node started with `user: false`). */
  key: string;
  adminKey: string;
  api(method: string, path: string, opts: { token: string; body?: unknown }): Promise<{ status: number; body: any; text: string }>;
  /** Tasks queued or running. */
  open(): Promise<number>;
  /** Starts the hub's CPU profile (BENCH_HUB_PROFILE, child hub only). */
  profile(): void;
  /** The hub's main thread profiled between two calls, for a missed target's extra round (child hub only). */
  cpu?: Profiler;
  /** The hub's event-loop delay: 'reset' starts a window, 'read' ends it (child hub only). */
  loopDelay?(op: 'reset' | 'read'): Promise<LoopDelay | undefined>;
  /** The hub process's id, for its CPU time in /proc (child hub only). */
  pid?: number;
  /** The hub's memory after a GC when the child runs with --expose-gc (child hub only). */
  stats?(): Promise<Stats>;
  /** Writes a heap snapshot of the hub to `path` (after a GC under --expose-gc); child hub only. */
  snapshot?(path: string): Promise<string>;
  /** Inserts `n` hosts of the bench user straight into the database; their credentials (child hub only). */
  seedHosts?(n: number, known?: boolean): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Forks a hub. `config`: overrides of the test hub's config (JSON-safe); `user: false` skips the
 * bench user (a second node of one database). BENCH_HUB_ARGS adds Node flags to the child.
 */
export async function forkHub(opts: { config?: Record<string, unknown>; user?: boolean; name?: string; nodeArgs?: string[] } = {}): Promise<BenchHub> {
  const child = fork(new URL('./hub-child.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx', ...(opts.nodeArgs ?? []), ...(process.env.BENCH_HUB_ARGS?.split(' ').filter(Boolean) ?? [])],
    env: { ...process.env, BENCH_HUB_CONFIG: JSON.stringify(opts.config ?? {}), BENCH_HUB_USER: opts.user === false ? '0' : '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let closing = false;
  child.on('exit', (code, signal) => void (!closing && console.error(`bench hub ${opts.name ?? ''} exited early: code ${code}, signal ${signal}`)));
  const waiters = new Map<number, (n: number) => void>();
  let loopWaiter: ((l: LoopDelay) => void) | undefined;
  /** Waiters of the one-answer requests (stats, seed), by the answer's tag. */
  const answers = new Map<string, (m: any) => void>();
  const ask = <T>(msg: object, tag: string) => new Promise<T>((res) => {
    answers.set(tag, (m) => (answers.delete(tag), res(m)));
    child.send(msg);
  });
  let seq = 0;
  const ready = await new Promise<{ url: string; key: string; adminKey: string }>((res, rej) => {
    child.once('exit', (c) => rej(new Error(`bench hub ${opts.name ?? ''} exited: ${c}`)));
    child.on('message', (m: any) => {
      if (m.t === 'ready') res(m);
      else if (m.t === 'open') waiters.get(m.id)?.(m.n);
      else if (m.t === 'loop') loopWaiter?.(m.loop);
      else answers.get(m.t)?.(m);
    });
  });
  return {
    url: ready.url, key: ready.key, adminKey: ready.adminKey, api: (m, p, o) => call(ready.url, m, p, o),
    open: () => new Promise((res) => {
      const id = ++seq;
      waiters.set(id, (n) => (waiters.delete(id), res(n)));
      child.send({ t: 'open', id });
    }),
    profile: () => void child.send({ t: 'profile' }),
    cpu: {
      start: () => ask({ t: 'cpu-start' }, 'cpu-started').then(() => undefined),
      stop: () => ask<{ profile: Profile }>({ t: 'cpu-stop' }, 'cpu-profile').then((m) => m.profile),
      pid: child.pid,
    },
    pid: child.pid,
    stats: () => ask<Stats>({ t: 'stats' }, 'stats'),
    snapshot: (path) => ask<{ path: string }>({ t: 'snapshot', path }, 'snapshotted').then((m) => m.path),
    seedHosts: async (n, known) => (await ask<{ credentials: string[] }>({ t: 'seed', n, known }, 'seeded')).credentials,
    loopDelay: (op) => new Promise((res) => {
      if (op === 'reset') return void child.send({ t: 'loop-reset' }, () => res(undefined));
      loopWaiter = (l) => ((loopWaiter = undefined), res(l));
      child.send({ t: 'loop-read' });
    }),
    close: () => new Promise((res) => {
      closing = true;
      if (child.exitCode !== null) return res();
      child.once('exit', () => res());
      child.send({ t: 'close' });
    }),
  };
}
