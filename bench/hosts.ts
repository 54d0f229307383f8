// Host-channel bench: N simulated hosts hold channels to a real hub, keep
// heartbeating, and are measured for connect rate, memory per connection
// (the hub's RSS delta / N, the hub running in a child process) and ping
// round trip p50/p99 with all of them open. The same N then go against a
// bare uWebSockets.js WebSocket server (hello → welcome, ping → pong, no
// state) in the same run, so the difference is the hub's own per-host cost.
// Clients come from several loopback addresses (127.0.0.2…) to stay under
// the per-address ephemeral-port limit. Bounded in count and time.
//
//   npx tsx bench/hosts.ts                 (BENCH_HOSTS=15000 for the target figure; DATABASE_URL for PostgreSQL)
import { fork, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { cpus, totalmem, loadavg, platform } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { decode } from '@msgpack/msgpack';
import { connectFakeHost, type FakeHost } from '../test/helpers/host.js';
import { encodeFrame } from '../host-protocol/index.js';
import { HOST_WS_PATH } from '../host-protocol/version.js';
import { RAW_HELLO } from './raw-host.js';
import { recording } from './main.js';

const SELF = fileURLToPath(import.meta.url);

type Target = 'hub' | 'hub (channel layer only)' | 'bare uWS';

export interface HostsFigure {
  target: Target;
  n: number;
  connected: number;
  failed: number;
  connectSeconds: number;
  connectsPerSecond: number;
  rssBaseMB: number;
  rssOpenMB: number;
  kbPerConnection: number;
  /** JS heap + external growth per connection (after GC): the part V8 owns, less noisy than RSS. */
  heapKbPerConnection: number;
  pingP50ms: number;
  pingP99ms: number;
  pings: number;
}

export interface HostsBenchOptions {
  n?: number;
  /** Loopback source addresses used round-robin. */
  addresses?: number;
  /** Upgrades in flight at once. */
  concurrency?: number;
  /** Pings sampled with everything open. */
  pings?: number;
  /** Whole-run limit; the bench stops itself. */
  maxSeconds?: number;
  /** Append the figures to bench/RESULTS.md (default true; `write` is the suite runner's name for it). */
  record?: boolean;
  write?: boolean;
  /** Which servers to measure, in order (default all three). */
  kinds?: Kind[];
}

// ---------------------------------------------------------------- child side

type ChildMsg = { t: 'ready'; port: number; credentials: string[] } | { t: 'rss'; rss: number; heap: number };

async function childHub(n: number, channelOnly: boolean): Promise<void> {
  if (channelOnly) {
    // Diagnostic variant: other domains' reactions to a host coming and going (their
    // database work per connect) are left out, so the row shows the channel layer alone.
    const { HostChannels } = await import('../src/hosts/gateway-impl.js');
    HostChannels.prototype.onHostUp = () => {};
    HostChannels.prototype.onHostDown = () => {};
  }
  const { startTestHub } = await import('../test/helpers/hub.js');
  const t = await startTestHub({ logLevel: 'warn' });
  const u = await t.user('bench');
  const credentials = await seedHosts(t.hub.ctx.em().getConnection(), u.id, n);
  serveChild(t.hub.port, credentials, () => t.close());
}

/** Inserts `n` hosts of `userId` straight into the database (pairing each over the API is slow); their credentials. */
/**
 * Inserts `n` hosts of the user. `known`: each row already holds the hello bench/raw-host.ts sends as
 * host i of the cluster bench (name `h${i}`), as hosts that connected before would (a reconnect storm).
 */
export async function seedHosts(conn: { execute(sql: string, params: unknown[]): Promise<unknown> }, userId: string, n: number, known = false): Promise<string[]> {
  const { hashSecret } = await import('../src/hosts/credentials.js');
  const credentials: string[] = [];
  const tag = randomBytes(3).toString('hex'); // a second call on one database makes new ids
  for (let i = 0; i < n; i += 1000) {
    const ids: string[] = [];
    const hashes: string[] = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      const c = `ahh_bench${randomBytes(16).toString('hex')}`;
      credentials.push(c);
      ids.push(`hst_bench${tag}${j}`);
      hashes.push(hashSecret(c));
    }
    if (known) {
      await conn.execute(
        `insert into hosts (id, user_id, name, credential_hash, cli_version, protocol_version, engines, capacity)
         values ${ids.map(() => `(?, ?, ?, ?, ?, ?, ?::jsonb, 1)`).join(',')}`,
        ids.flatMap((id, k) => [id, userId, `h${i + k}`, hashes[k], RAW_HELLO.cli, RAW_HELLO.v, JSON.stringify(RAW_HELLO.engines)]),
      );
      continue;
    }
    await conn.execute(
      `insert into hosts (id, user_id, name, credential_hash, engines, capacity) values ${ids.map(() => `(?, ?, ?, ?, '[]'::jsonb, 1)`).join(',')}`,
      ids.flatMap((id, k) => [id, userId, id, hashes[k]]),
    );
  }
  return credentials;
}

async function childBare(): Promise<void> {
  const { uws } = await import('../src/server/uws.js');
  const app = uws.App();
  app.ws(HOST_WS_PATH, {
    maxPayloadLength: 4 * 1024 * 1024,
    idleTimeout: 0,
    message: (ws, bytes) => {
      let f: { t?: string; id?: number; ts?: number };
      try {
        f = decode(new Uint8Array(bytes)) as typeof f;
      } catch {
        return ws.end(4400);
      }
      if (f.t === 'hello') ws.send(encodeFrame({ t: 'welcome', hostId: 'bare', heartbeatMs: 5000 }), true);
      else if (f.t === 'ping' && typeof f.id === 'number') ws.send(encodeFrame({ t: 'pong', id: f.id, ts: f.ts }), true);
    },
  });
  const port = await new Promise<number>((res, rej) => app.listen('127.0.0.1', 0, (s) => (s ? res(uws.us_socket_local_port(s)) : rej(new Error('listen')))));
  serveChild(port, [], async () => {});
}

function serveChild(port: number, credentials: string[], close: () => Promise<void>): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', async (m: { t: string }) => {
    if (m.t === 'rss') {
      gc?.();
      await new Promise((r) => setTimeout(r, 200));
      gc?.();
      const m = process.memoryUsage();
      process.send!({ t: 'rss', rss: m.rss, heap: m.heapUsed + m.external } satisfies ChildMsg);
    } else if (m.t === 'stop') {
      await close().catch(() => undefined);
      process.exit(0);
    }
  });
  process.send!({ t: 'ready', port, credentials } satisfies ChildMsg);
}

// ---------------------------------------------------------------- parent side

type Kind = 'hub' | 'channel' | 'bare';
const TARGET: Record<Kind, Target> = { hub: 'hub', channel: 'hub (channel layer only)', bare: 'bare uWS' };

function startChild(kind: Kind, n: number): { child: ChildProcess; ready: Promise<{ port: number; credentials: string[] }>; rss(): Promise<{ rss: number; heap: number }>; stop(): Promise<void> } {
  const child = fork(SELF, ['--child', kind, String(n)], { execArgv: ['--import', 'tsx', '--expose-gc', ...(process.env.BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? [])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting: Array<(m: ChildMsg) => void> = [];
  child.on('message', (m: ChildMsg) => waiting.shift()?.(m));
  const next = () => new Promise<ChildMsg>((res, rej) => {
    waiting.push(res);
    child.once('exit', (code) => rej(new Error(`bench child exited (${code})`)));
  });
  return {
    child,
    ready: next() as Promise<{ port: number; credentials: string[] }>,
    async rss() {
      const p = next();
      child.send({ t: 'rss' });
      return (await p) as { rss: number; heap: number };
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ t: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function measure(kind: Kind, o: Required<Omit<HostsBenchOptions, 'record' | 'write' | 'kinds'>>, deadline: number): Promise<HostsFigure> {
  const c = startChild(kind, o.n);
  const { port, credentials } = await c.ready;
  const url = `ws://127.0.0.1:${port}${HOST_WS_PATH}`;
  const rssBase = await c.rss();
  const hosts: FakeHost[] = [];
  let failed = 0;
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < o.n && Date.now() < deadline) {
      const i = next++;
      try {
        hosts.push(await connectFakeHost(url, kind === 'bare' ? 'none' : credentials[i], { localAddress: `127.0.0.${2 + (i % o.addresses)}`, name: `h${i}` }));
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const connectSeconds = (performance.now() - start) / 1000;
  // Let the hub settle (batched writes, presence) before reading its memory.
  await new Promise((r) => setTimeout(r, 3000));
  const rssOpen = await c.rss();
  const rtts: number[] = [];
  let k = 0;
  const pinger = async () => {
    while (k < o.pings && Date.now() < deadline && hosts.length) {
      k++;
      rtts.push(await hosts[Math.floor(Math.random() * hosts.length)].ping());
    }
  };
  await Promise.all(Array.from({ length: 4 }, pinger));
  rtts.sort((a, b) => a - b);
  const open = hosts.filter((h) => h.ws.readyState === h.ws.OPEN).length;
  for (const h of hosts) h.ws.terminate();
  await c.stop();
  return {
    target: TARGET[kind],
    n: o.n,
    connected: open,
    failed,
    connectSeconds: round(connectSeconds),
    connectsPerSecond: Math.round(hosts.length / connectSeconds),
    rssBaseMB: round(rssBase.rss / 2 ** 20, 1),
    rssOpenMB: round(rssOpen.rss / 2 ** 20, 1),
    kbPerConnection: round((rssOpen.rss - rssBase.rss) / 1024 / Math.max(1, hosts.length)),
    heapKbPerConnection: round((rssOpen.heap - rssBase.heap) / 1024 / Math.max(1, hosts.length)),
    pingP50ms: round(pct(rtts, 50)),
    pingP99ms: round(pct(rtts, 99)),
    pings: rtts.length,
  };
}

export async function run(opts: HostsBenchOptions = {}): Promise<HostsFigure[]> {
  const o = {
    n: opts.n ?? Number(process.env.BENCH_HOSTS ?? 2000),
    addresses: opts.addresses ?? 8,
    concurrency: opts.concurrency ?? 200,
    pings: opts.pings ?? 2000,
    maxSeconds: opts.maxSeconds ?? Number(process.env.BENCH_MAX_SECONDS ?? 300),
  };
  const deadline = Date.now() + o.maxSeconds * 1000;
  const figures: HostsFigure[] = [];
  for (const k of opts.kinds ?? (process.env.BENCH_KINDS?.split(',') as Kind[] | undefined) ?? ['hub', 'channel', 'bare']) figures.push(await measure(k, o, deadline));
  if (opts.record ?? opts.write ?? true) record(figures);
  return figures;
}

function record(figures: HostsFigure[]): void {
  const cpu = cpus();
  const lines = [
    '',
    `## Host channels (bench/hosts.ts) — ${new Date().toISOString()}`,
    `Machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${platform()}, load average ${loadavg()[0].toFixed(1)} at the end; database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}. Clients: one process, \`ws\`, 200 upgrades in flight, 8 loopback source addresses, heartbeat every 5 s; pings sampled 4 at a time with all channels open. Memory = (RSS with all open − RSS before, after GC) / N, measured in the server's own child process.`,
    '',
    '| target | N | open | failed | connect time (s) | connects/s | RSS before → open (MB) | RSS KB / conn | JS heap KB / conn | ping p50 / p99 (ms) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...figures.map((f) => `| ${f.target} | ${f.n} | ${f.connected} | ${f.failed} | ${f.connectSeconds} | ${f.connectsPerSecond} | ${f.rssBaseMB} → ${f.rssOpenMB} | ${f.kbPerConnection} | ${f.heapKbPerConnection} | ${f.pingP50ms} / ${f.pingP99ms} |`),
  ];
  appendFileSync(new URL('./RESULTS.md', import.meta.url), lines.join('\n') + '\n');
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  (argv[1] === 'bare' ? childBare() : childHub(Number(argv[2]), argv[1] === 'channel')).catch((e) => {
    process.stderr.write(`bench child failed: ${(e as Error).stack}\n`);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run({ record: recording() }).then(
    (figures) => {
      console.table(figures);
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
