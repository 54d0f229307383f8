// HTTP bench: market reads of a real hub against a bare uWebSockets.js
// endpoint in the same run. The hub (PostgreSQL when DATABASE_URL is set,
// else embedded PGlite) is seeded with approved public agents; a load worker
// thread drives each target with a fixed number of keep-alive connections
// for a fixed time and reports requests/s and p50/p99 latency.
//
//   npx tsx bench/http.ts   (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_AGENTS override)
import { Worker } from 'node:worker_threads';
import { execSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { runIfMain, recording } from './main.js';
import { startTestHub } from '../test/helpers/hub.js';
import { uws, type us_listen_socket } from '../src/server/uws.js';
import { notifyAgentChanged } from '../src/agents/usage.js';
import { startFastifyPeer, type Peer } from './peers/fastify-market.js';
import { inProcessProfiler, profiledRound, profileWanted } from './miss-profile.js';
import { judged, type Verdict } from './verdicts.js';

/** Issue 15's target 1: signed-in reads at ≥ 35 % of the bare endpoint serving the same body, and ≥ 5× the Fastify peer. */
const SIGNED_OF_BARE = 0.35;
const SIGNED_OVER_PEER = 5;

export interface Figure {
  target: string;
  rps: number;
  p50ms: number;
  p99ms: number;
  requests: number;
  errors: number;
}

export interface BenchResult {
  database: 'postgresql' | 'embedded';
  agents: number;
  seconds: number;
  rounds: number;
  connections: number;
  figures: Figure[];
  /** Market read rate as a fraction of the bare endpoint's rate for the same body (and the list against the small body). */
  ratios: { byId: number; list: number; listVsSmallBody: number; signedById: number; signedList: number; signedByIdVsPeer?: number; signedListVsPeer?: number; signedByIdLimited?: number };
  /** The hub's CPU profiles over more signed-in reads, in text, for a read that missed target 1 (bench/miss-profile.ts). */
  profile?: string;
  /** Target 1, per signed-in read: against the bare endpoint, and against the peer. */
  verdicts: Verdict[];
}

/** Target 1 for one signed-in read: its share of the bare endpoint's rate, and its multiple of the peer's (none on the embedded database). */
export function readVerdicts(read: string, ofBare: number, overPeer: number | undefined): Verdict[] {
  return [
    { target: `1. signed-in \`${read}\` ≥ ${SIGNED_OF_BARE * 100} % of the bare endpoint`, outcome: judged(ofBare >= SIGNED_OF_BARE), figure: `${(ofBare * 100).toFixed(1)} %` },
    overPeer === undefined
      ? { target: `1. signed-in \`${read}\` ≥ ${SIGNED_OVER_PEER}× the Fastify + pg peer`, outcome: 'no verdict', figure: 'no peer on the embedded database' }
      : { target: `1. signed-in \`${read}\` ≥ ${SIGNED_OVER_PEER}× the Fastify + pg peer`, outcome: judged(overPeer >= SIGNED_OVER_PEER), figure: `${overPeer.toFixed(2)}×` },
  ];
}

// Plain JS so the worker needs no TypeScript loader. A minimal HTTP/1.1
// keep-alive client on raw sockets (one request in flight per connection,
// responses framed by Content-Length): node:http's client costs more CPU per
// request than the servers under test, which would cap the bare endpoint.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { base, paths, conns, ms, headers } = workerData;
const u = new URL(base);
const reqs = paths.map((p) => Buffer.from('GET ' + p + ' HTTP/1.1\\r\\nHost: ' + u.host + '\\r\\nConnection: keep-alive\\r\\n' + (headers || '') + '\\r\\n'));
let count = 0, errors = 0, next = 0;
const lat = [];
const end = Date.now() + ms;
const connection = () => new Promise((resolve) => {
  const sock = net.connect(Number(u.port), u.hostname);
  sock.setNoDelay(true);
  let buf = Buffer.alloc(0), t0 = 0n, need = -1, status = 0;
  const send = () => {
    if (Date.now() >= end) { sock.destroy(); return resolve(); }
    t0 = process.hrtime.bigint();
    sock.write(reqs[next++ % reqs.length]);
  };
  sock.on('connect', send);
  sock.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (need < 0) {
        const h = buf.indexOf('\\r\\n\\r\\n');
        if (h < 0) return;
        const head = buf.subarray(0, h).toString('latin1');
        status = Number(head.slice(9, 12));
        const m = /content-length:\\s*(\\d+)/i.exec(head);
        need = h + 4 + (m ? Number(m[1]) : 0);
      }
      if (buf.length < need) return;
      buf = buf.subarray(need);
      need = -1;
      if (status === 200) { count++; lat.push(Number(process.hrtime.bigint() - t0) / 1e6); } else errors++;
      send();
    }
  });
  sock.on('error', () => { errors++; resolve(); });
  sock.on('close', () => resolve());
});
Promise.all(Array.from({ length: conns }, connection)).then(() => {
  parentPort.postMessage({ count, errors, lat: Float64Array.from(lat) });
});
`;

export function drive(base: string, paths: string[], conns: number, ms: number, headers = ''): Promise<{ count: number; errors: number; lat: Float64Array }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER, { eval: true, workerData: { base, paths, conns, ms, headers } });
    w.once('message', (m) => {
      void w.terminate();
      resolve(m);
    });
    w.once('error', reject);
  });
}

interface Target {
  name: string;
  base: string;
  paths: string[];
  /** Extra raw header lines, each ending in CRLF. */
  headers?: string;
}

/**
 * Each target gets `seconds` in total, cut into `rounds` slices run in turn
 * (bare, by id, list, bare, …), so background load on a shared machine
 * weighs on every target alike instead of on whichever ran at a bad moment.
 */
async function measureAll(targets: Target[], conns: number, seconds: number, rounds: number): Promise<Figure[]> {
  for (const t of targets) await drive(t.base, t.paths, conns, 1000, t.headers); // warm-up, discarded
  const acc = targets.map(() => ({ count: 0, errors: 0, lat: [] as Float64Array[] }));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < targets.length; i++) {
      const out = await drive(targets[i].base, targets[i].paths, conns, (seconds * 1000) / rounds, targets[i].headers);
      acc[i].count += out.count;
      acc[i].errors += out.errors;
      acc[i].lat.push(out.lat);
    }
  }
  return targets.map((t, i) => {
    const all = new Float64Array(acc[i].lat.reduce((n, l) => n + l.length, 0));
    let o = 0;
    for (const l of acc[i].lat) {
      all.set(l, o);
      o += l.length;
    }
    all.sort();
    const pct = (p: number) => (all.length ? all[Math.min(all.length - 1, Math.floor(all.length * p))] : NaN);
    return { target: t.name, rps: Math.round(acc[i].count / seconds), p50ms: round(pct(0.5)), p99ms: round(pct(0.99)), requests: acc[i].count, errors: acc[i].errors };
  });
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export async function run(opts: { seconds?: number; connections?: number; agents?: number; rounds?: number; write?: boolean } = {}): Promise<BenchResult> {
  const seconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5);
  const conns = opts.connections ?? Number(process.env.BENCH_CONNECTIONS ?? 16);
  const n = opts.agents ?? Number(process.env.BENCH_AGENTS ?? 200);
  const rounds = opts.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const t = await startTestHub({ rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 });
  // With REDIS_URL: a second hub with the rate limits on and counted in Redis (limits too high to refuse the
  // bench, so what is measured is what counting costs a request).
  const limited = process.env.REDIS_URL
    ? await startTestHub({ redisUrl: process.env.REDIS_URL, redisPrefix: `bench-http-${process.pid}:`, rateLimitPerMinute: 6_000_000, rateLimitPerIpPerMinute: 12_000_000 })
    : undefined;
  let bare: us_listen_socket | undefined;
  let peer: Peer | undefined;
  try {
    const owner = await t.user('bench-owner');
    const viewer = await t.user('bench-viewer');
    const ids = await seed(t.hub.ctx, owner.id, n);
    notifyAgentChanged(t.hub.ctx.bus, ...ids);

    // The bare endpoints answer the very bodies the hub gives: one agent, and a page of 20.
    const sample = await t.api('GET', `/api/v1/agents/${encodeURIComponent(ids[0])}`);
    const samplePage = await t.api('GET', '/api/v1/agents?pageSize=20');
    if (sample.status !== 200 || samplePage.status !== 200) throw new Error(`seeded agents not readable: ${sample.status} ${samplePage.status}`);
    const bodies: Record<string, string> = { '/bare/agent': sample.text, '/bare/list': samplePage.text };
    const app = uws.App().get('/bare/*', (res, req) => {
      const body = bodies[req.getUrl()] ?? '{}';
      res.cork(() => res.writeHeader('Content-Type', 'application/json').end(body));
    });
    bare = await new Promise<us_listen_socket>((ok, no) => app.listen('127.0.0.1', 0, (s) => (s ? ok(s) : no(new Error('bare listen failed')))));
    const barePort = uws.us_socket_local_port(bare);

    const byIdPaths = ids.map((id) => `/api/v1/agents/${encodeURIComponent(id)}`);
    const signedIn = `Authorization: Bearer ${viewer.key}\r\n`;
    // The conventional peer needs a PostgreSQL server to talk to; on the embedded database it is left out.
    if (t.config.databaseUrl) peer = await startFastifyPeer(t.config.databaseUrl);
    const peerTargets: Target[] = peer
      ? [
          { name: 'Fastify 5 + pg peer, one agent (signed in)', base: peer.url, paths: ids.map((id) => `/peer/agents/${encodeURIComponent(id)}`), headers: signedIn },
          { name: 'Fastify 5 + pg peer, page of 20 (signed in)', base: peer.url, paths: ['/peer/agents?pageSize=20'], headers: signedIn },
        ]
      : [];
    const limitedTargets: Target[] = [];
    if (limited) {
      const lOwner = await limited.user('bench-owner');
      const lViewer = await limited.user('bench-viewer');
      const lIds = await seed(limited.hub.ctx, lOwner.id, n);
      notifyAgentChanged(limited.hub.ctx.bus, ...lIds);
      limitedTargets.push({ name: 'GET /api/v1/agents/{id} (signed in, rate limits on, counted in Redis)', base: limited.url, paths: lIds.map((id) => `/api/v1/agents/${encodeURIComponent(id)}`), headers: `Authorization: Bearer ${lViewer.key}\r\n` });
    }
    const signedTargets: Target[] = [
      // A signed-in caller: the API key check, the caller's flags, the shared serialized page.
      { name: 'GET /api/v1/agents/{id} (signed in)', base: t.url, paths: byIdPaths, headers: signedIn },
      { name: 'GET /api/v1/agents?pageSize=20 (signed in)', base: t.url, paths: ['/api/v1/agents?pageSize=20'], headers: signedIn },
    ];
    const figures = await measureAll(
      [
        { name: 'bare uWS endpoint, one-agent body', base: `http://127.0.0.1:${barePort}`, paths: ['/bare/agent'] },
        { name: 'bare uWS endpoint, 20-agent page body', base: `http://127.0.0.1:${barePort}`, paths: ['/bare/list'] },
        { name: 'GET /api/v1/agents/{id}', base: t.url, paths: byIdPaths },
        { name: 'GET /api/v1/agents?pageSize=20', base: t.url, paths: ['/api/v1/agents?pageSize=20'] },
        ...signedTargets,
        ...peerTargets,
        ...limitedTargets,
      ],
      conns,
      seconds,
      rounds,
    );
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const result: BenchResult = {
      verdicts: [],
      database: t.config.databaseUrl ? 'postgresql' : 'embedded',
      agents: n,
      seconds,
      rounds,
      connections: conns,
      figures,
      ratios: {
        byId: r3(figures[2].rps / figures[0].rps),
        list: r3(figures[3].rps / figures[1].rps),
        listVsSmallBody: r3(figures[3].rps / figures[0].rps),
        signedById: r3(figures[4].rps / figures[0].rps),
        signedList: r3(figures[5].rps / figures[1].rps),
        ...(peer ? { signedByIdVsPeer: r3(figures[4].rps / figures[6].rps), signedListVsPeer: r3(figures[5].rps / figures[7].rps) } : {}),
        ...(limited ? { signedByIdLimited: r3(figures[figures.length - 1].rps / figures[0].rps) } : {}),
      },
    };
    // A signed-in read that missed target 1: the hub's main thread profiled over as long again of that read alone.
    const slice = seconds / rounds;
    const profiles: string[] = [];
    for (const [k, target] of signedTargets.entries()) {
      const read = k === 0 ? 'GET /agents/{id}' : 'GET /agents?pageSize=20';
      const verdicts = k === 0 ? readVerdicts(read, result.ratios.signedById, result.ratios.signedByIdVsPeer) : readVerdicts(read, result.ratios.signedList, result.ratios.signedListVsPeer);
      result.verdicts.push(...verdicts);
      const missed = verdicts.some((v) => v.outcome === 'NOT met');
      if (!profileWanted(missed)) continue;
      profiles.push(await profiledRound(`The hub's CPU profile over ${slice} s more of \`${target.name}\` (target 1 ${missed ? 'missed' : 'not missed'} for it; not part of the figures above).`,
        [{ name: 'hub (this process\'s main thread; the load runs in a worker thread)', profiler: inProcessProfiler() }], async () => {
          const out = await drive(target.base, target.paths, conns, slice * 1000, target.headers);
          return `Its rate: ${Math.round(out.count / slice)} requests/s.`;
        }));
    }
    if (profiles.length) result.profile = profiles.join('');
    if (opts.write ?? false) writeResults(result);
    return result;
  } finally {
    if (bare) uws.us_listen_socket_close(bare);
    await peer?.close();
    await limited?.close();
    await t.close();
  }
}

/** 200 approved public agents in one statement (the API path is covered by the tests). */
export async function seed(ctx: Awaited<ReturnType<typeof startTestHub>>['hub']['ctx'], ownerId: string, n: number): Promise<string[]> {
  const rows = await ctx.em().getConnection().execute(
    `insert into agents (id, owner_id, name, display_name, description, tags, category, scope, pricing, usage_status, review_status, enable, usage_count, session_count)
     select 'bench-owner/agent-' || g, ?, 'agent-' || g, 'Bench agent ' || g, 'A seeded agent that helps with task number ' || g || ' of the benchmark.',
            jsonb_build_array('bench', 'tag' || (g % 10)), (array['coding','writing','data','ops'])[1 + g % 4], 'public', 'free', 'online', 'approved', true,
            (g * 37) % 1000, (g * 13) % 500
       from generate_series(1, ?) g returning id`,
    [ownerId, n],
  );
  return rows.map((r: any) => r.id as string);
}

function machine(): string {
  const sh = (c: string) => {
    try {
      return execSync(c, { encoding: 'utf8' }).trim();
    } catch {
      return '?';
    }
  };
  const mem = sh('free -h').split('\n').find((l) => l.startsWith('Mem:'))?.split(/\s+/)[1] ?? '?';
  return `nproc ${sh('nproc')}, memory ${mem} (free -h), ${sh('uname -sr')}, Node ${process.version}, load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
}

function writeResults(r: BenchResult): void {
  const lines = [
    '',
    `## HTTP market reads — ${new Date().toISOString()}`,
    '',
    `Machine: ${machine()}. Database: ${r.database}. ${r.agents} approved public agents; ${r.connections} keep-alive connections from one load worker thread (raw-socket HTTP/1.1 client) in the same process; ${r.seconds} s per target in ${r.rounds} interleaved slices after a 1 s warm-up; anonymous requests except the signed-in rows (one user's API key; the peer looks the same key up).`,
    '',
    '| target | requests/s | p50 ms | p99 ms | requests | errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.figures.map((f) => `| ${f.target} | ${f.rps} | ${f.p50ms} | ${f.p99ms} | ${f.requests} | ${f.errors} |`),
    '',
    `Ratio to the bare endpoint serving the same body: \`GET /agents/{id}\` ${(r.ratios.byId * 100).toFixed(1)} %, \`GET /agents?pageSize=20\` ${(r.ratios.list * 100).toFixed(1)} % (against the one-agent body: ${(r.ratios.listVsSmallBody * 100).toFixed(1)} %); target ≥ 25 % on PostgreSQL.`,
    `Signed in (API key): \`GET /agents/{id}\` ${(r.ratios.signedById * 100).toFixed(1)} % of bare, \`GET /agents?pageSize=20\` ${(r.ratios.signedList * 100).toFixed(1)} % of bare (target ≥ ${SIGNED_OF_BARE * 100} %)` +
      (r.ratios.signedByIdVsPeer !== undefined ? `; against the Fastify 5 + pg peer ${r.ratios.signedByIdVsPeer.toFixed(2)}× and ${r.ratios.signedListVsPeer!.toFixed(2)}× (target ≥ ${SIGNED_OVER_PEER}×).` : '; no Fastify peer on the embedded database.'),
    ...(r.ratios.signedByIdLimited !== undefined
      ? [`With the rate limits on and counted in Redis (a second hub, limits too high to refuse): \`GET /agents/{id}\` signed in ${(r.ratios.signedByIdLimited * 100).toFixed(1)} % of bare.`]
      : []),
    ...(r.profile ? [r.profile] : []),
    '',
  ];
  const file = new URL('./RESULTS.md', import.meta.url);
  if (!existsSync(file)) lines.unshift('# Benchmark results');
  appendFileSync(file, lines.join('\n'));
}

runIfMain(import.meta.url, async () => {
  const r = await run({ write: recording() });
  console.table(r.figures);
  console.log(`database ${r.database}; ratio by id ${(r.ratios.byId * 100).toFixed(1)} %, list ${(r.ratios.list * 100).toFixed(1)} % (vs one-agent body ${(r.ratios.listVsSmallBody * 100).toFixed(1)} %)`);
  console.log(`signed in: by id ${(r.ratios.signedById * 100).toFixed(1)} %, list ${(r.ratios.signedList * 100).toFixed(1)} % of bare; vs Fastify peer ${r.ratios.signedByIdVsPeer ?? '-'}× / ${r.ratios.signedListVsPeer ?? '-'}×`);
});
