// Dispatch bench: 100 sessions on 20 simulated hosts (in-process protocol
// clients) against a real hub. Two figures:
//  1. messages/s and latency from `POST /sessions/{id}/messages` (client
//     send) to the host receiving run.start; each host ends a run at once.
//  2. latency from a host's run.delta frame to the SSE client (GET
//     /sessions/{id}/events) receiving the message.delta, at a fixed total
//     delta rate spread over 20 running turns.
// By default the hub runs in a child process (bench/hub-child.ts) and the
// load generators (client, hosts, SSE readers) in this one, each with a core
// of this 2-core machine; BENCH_HUB=inline puts all in one process (the
// earlier figures, which include the generators' contention).
//
//   npx tsx bench/dispatch.ts     (DATABASE_URL for PostgreSQL; BENCH_SECONDS, BENCH_RATE, BENCH_DELTA_RATE, BENCH_HUB=child|inline)
import { appendFileSync } from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { get as httpGet } from 'node:http';
import { startTestHub } from '../test/helpers/hub.js';
import { call } from '../test/helpers/nodes.js';
import { forkHub, type BenchHub, type LoopDelay } from './hub-process.js';
import { LoadClient } from './load-client.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from '../test/helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';

const HOSTS = 20;
const SESSIONS = 100;
const TARGET_DISPATCH_P99_MS = 10;
const TARGET_DELTA_P99_MS = 5;
/** The simulated hosts send their deltas every this many ms (each turn perTick at a time). */
const DELTA_TICK_MS = Number(process.env.BENCH_DELTA_TICK_MS ?? 2);

export interface DispatchFigure {
  rate: number;
  sent: number;
  accepted: number;
  queued: number;
  errors: number;
  dispatched: number;
  messagesPerSecond: number;
  latency: { p50: number; p99: number; max: number };
}

export interface DispatchResult {
  /** Where the hub ran: its own process, or with the load generators. */
  hub: 'child' | 'inline';
  seconds: number;
  /** At a fifth of the target rate, then at the target rate. */
  dispatch: DispatchFigure[];
  deltaRate: number;
  deltasSent: number;
  deltasReceived: number;
  delta: { p50: number; p99: number; max: number };
  /** Event-loop delay during the delta phase (ms): the hub's (child hub only) and the load generators'. */
  loop: { hub?: LoopDelay; bench: LoopDelay };
}


const pct = (xs: number[]) => {
  if (!xs.length) return { p50: NaN, p99: NaN, max: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(at(0.5)), p99: r(at(0.99)), max: r(s[s.length - 1]) };
};
/** A histogram's nanoseconds as milliseconds, 2 decimals. */
const ms = (ns: number) => Math.round(ns / 1e4) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Sim {
  host: FakeHost;
  agentId: string;
  sessions: string[];
}

async function inlineHub(): Promise<BenchHub> {
  const t = await startTestHub({ logLevel: 'warn', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 });
  const u = await t.user('bench');
  const conn = t.hub.ctx.em().getConnection();
  return {
    url: t.url, key: u.key, adminKey: t.adminKey, api: (m, p, o) => call(t.url, m, p, o),
    open: async () => Number((await conn.execute(`select count(*) as c from session_tasks where status in ('queued', 'running')`))[0].c),
    profile: () => undefined,
    close: () => t.close(),
  };
}

/** 20 paired hosts (heartbeating, capacity 5) with an agent and 5 sessions each. */
export async function setup(t: BenchHub, key: string): Promise<Sim[]> {
  const sims: Sim[] = [];
  for (let i = 0; i < HOSTS; i++) {
    const { hostId, credential } = await pairHost(t, key, `bench-${i}`);
    const host = await connectFakeHost(t, credential, { capacity: SESSIONS / HOSTS, heartbeat: true });
    const a = await eventually(async () => {
      const r = await t.api('POST', '/api/v1/agents', { token: key, body: { name: `bench-${i}`, scope: 'private', hostId, engine: 'claude-code' } });
      return r.status === 201 ? r : undefined;
    });
    const sessions: string[] = [];
    for (let j = 0; j < SESSIONS / HOSTS; j++) {
      const r = await t.api('POST', '/api/v1/sessions', { token: key, body: { agentId: a.body.data.id } });
      if (r.status !== 201) throw new Error(`session: ${r.status} ${r.text}`);
      sessions.push(r.body.data.id);
    }
    sims.push({ host, agentId: a.body.data.id, sessions });
  }
  return sims;
}

/** Calls `onStart` for every run.start a host receives (decoded once more here, off the helper's list). */
export function onRunStart(h: FakeHost, onStart: (f: { runId: string; sessionId: string }) => void) {
  h.ws.on('message', (data: Buffer) => {
    const d = decodeHubFrame(data);
    if (d.frame?.t === 'run.start') onStart(d.frame);
  });
}

export async function run(opts: { seconds?: number; rate?: number; deltaRate?: number; write?: boolean; hub?: 'child' | 'inline' } = {}): Promise<DispatchResult> {
  const seconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5);
  const rate = opts.rate ?? Number(process.env.BENCH_RATE ?? 500);
  const deltaRate = opts.deltaRate ?? Number(process.env.BENCH_DELTA_RATE ?? 20_000);
  const where = opts.hub ?? (process.env.BENCH_HUB === 'inline' ? 'inline' : 'child');
  const t = where === 'child' ? await forkHub() : await inlineHub();
  const client = new LoadClient();
  try {
    const u = { key: t.key };
    const sims = await setup(t, u.key);
    const say = (m: string) => void (process.env.BENCH_VERBOSE && console.error(`dispatch bench: ${m}`));
    say('setup done');
    t.profile();
    const all = sims.flatMap((s) => s.sessions);

    // ---------- 1. POST → run.start ----------
    // Per session, the send times of its messages not yet started, oldest first (a session runs them in order).
    const waiting = new Map<string, number[]>();
    let lat: number[] = [];
    let ending = true;
    for (const s of sims) {
      onRunStart(s.host, (f) => {
        if (!ending) return;
        const t0 = waiting.get(f.sessionId)?.shift();
        if (t0 !== undefined) lat.push(performance.now() - t0);
        s.host.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      });
    }
    const phase = async (r: number, secs = seconds): Promise<DispatchFigure> => {
      lat = [];
      let sent = 0, accepted = 0, queued = 0, errors = 0;
      const inflight: Promise<void>[] = [];
      const start = performance.now();
      const total = Math.round(r * secs);
      let next = 0;
      while (sent < total) {
        const due = start + (sent / r) * 1000;
        const now = performance.now();
        if (due > now) await sleep(Math.max(0, due - now - 0.5));
        const sid = all[next++ % all.length];
        sent++;
        const t0 = performance.now();
        const q = waiting.get(sid) ?? [];
        waiting.set(sid, q);
        q.push(t0);
        const drop = () => {
          const i = q.indexOf(t0);
          if (i >= 0) q.splice(i, 1);
          errors++;
        };
        inflight.push(
          client.post(`${t.url}/api/v1/sessions/${sid}/messages`, u.key, { content: `m${sent}` }).then(({ status, body }) => {
            if (status !== 202) drop();
            else if (body.status === 'queued') queued++;
            else accepted++;
          }, drop),
        );
      }
      await Promise.all(inflight);
      // Messages that waited start as turns end: wait until nothing is queued or running.
      await eventually(async () => (await t.open()) === 0, 60_000, 20);
      const elapsed = (performance.now() - start) / 1000;
      say(`rate ${r}: sent ${sent}, dispatched ${lat.length} in ${elapsed.toFixed(1)} s`);
      return { rate: r, sent, accepted, queued, errors, dispatched: lat.length, messagesPerSecond: Math.round(lat.length / elapsed), latency: pct(lat) };
    };
    await phase(50, 1); // warm-up (JIT, pools), not reported
    const baseline = await phase(Math.max(1, Math.round(rate / 5)));
    const target = await phase(rate);

    // ---------- 2. run.delta → SSE message.delta ----------
    ending = false;
    const live: Array<{ host: FakeHost; runId: string; sessionId: string }> = [];
    for (const s of sims) {
      const sessionId = s.sessions[0];
      const got = new Promise<string>((res) => onRunStart(s.host, (f) => f.sessionId === sessionId && res(f.runId)));
      const r = await t.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: u.key, body: { content: 'stream' } });
      if (r.status !== 202) throw new Error(`delta phase: ${r.status} ${r.text}`);
      say(`delta turn ${r.text}`);
      live.push({ host: s.host, runId: await got, sessionId });
    }
    say('turns for deltas running');
    const dlat: number[] = [];
    // Readers on node:http, not fetch: web streams cost the bench's event loop several times more
    // per chunk, and that loop's lag would be counted as the hub's latency.
    const readers = await Promise.all(live.map((l) => new Promise<() => void>((resolve, reject) => {
      const req = httpGet(`${t.url}/api/v1/sessions/${l.sessionId}/events`, { headers: { authorization: `Bearer ${u.key}` }, agent: false }, (res) => {
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buf += chunk;
          const cut = buf.lastIndexOf('\n\n');
          if (cut < 0) return;
          const done = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          // Each message.delta frame carries its send time as the delta text.
          for (let i = done.indexOf('"delta":"'); i >= 0; i = done.indexOf('"delta":"', i + 9)) {
            const v = Number(done.slice(i + 9, done.indexOf('"', i + 9)));
            if (Number.isFinite(v)) dlat.push(now - v);
          }
        });
        res.on('error', () => undefined);
        resolve(() => req.destroy());
      });
      req.on('error', (e) => reject(e));
    })));
    await sleep(200);
    const benchLoop = monitorEventLoopDelay({ resolution: 1 });
    benchLoop.enable();
    t.loopDelay?.('reset');
    let deltasSent = 0;
    // Ticks of DELTA_TICK_MS: an engine streams its deltas continuously, not in 10 ms bursts of 200.
    const perTick = Math.max(1, Math.round((deltaRate / live.length) * (DELTA_TICK_MS / 1000)));
    const dStart = performance.now();
    while (performance.now() - dStart < seconds * 1000) {
      const tickDue = dStart + (deltasSent / deltaRate) * 1000;
      const now = performance.now();
      if (tickDue > now) await sleep(Math.max(0, tickDue - now));
      for (const l of live) {
        for (let k = 0; k < perTick; k++) l.host.send({ t: 'run.delta', runId: l.runId, text: String(performance.now()) });
        deltasSent += perTick;
      }
    }
    const dElapsed = (performance.now() - dStart) / 1000;
    benchLoop.disable();
    const hubLoop = await t.loopDelay?.('read');
    await sleep(500);
    for (const l of live) l.host.send({ t: 'run.end', runId: l.runId, ok: true });
    await sleep(200);
    for (const stop of readers) stop();

    const result: DispatchResult = {
      hub: where, seconds, dispatch: [baseline, target],
      deltaRate: Math.round(deltasSent / dElapsed), deltasSent, deltasReceived: dlat.length, delta: pct(dlat),
      loop: { hub: hubLoop, bench: { p99: ms(benchLoop.percentile(99)), max: ms(benchLoop.max) } },
    };
    console.log(JSON.stringify(result));
    if (opts.write) record(result);
    for (const s of sims) s.host.close();
    return result;
  } finally {
    client.close();
    await t.close();
  }
}

function record(r: DispatchResult): void {
  const machine = `nproc ${cpus().length} (${cpus()[0]?.model?.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
  const ok = (v: number, target: number) => (v <= target ? 'met' : 'NOT met');
  appendFileSync(new URL('./RESULTS.md', import.meta.url), [
    '',
    `## Dispatch and streaming (bench/dispatch.ts) — ${new Date().toISOString()}`,
    '',
    `Machine: ${machine}. ${SESSIONS} sessions on ${HOSTS} simulated hosts (in-process protocol clients, capacity ${SESSIONS / HOSTS} each, each run ended at once); ${r.hub === 'child' ? 'hub in a child process, client, hosts and SSE readers in the bench process' : 'client, hub and hosts in one process'}.`,
    '',
    '| measure | offered | done | p50 ms | p99 ms | max ms | target p99 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.dispatch.map((d) => `| POST /messages → host receives run.start | ${d.rate} msg/s × ${r.seconds} s (${d.sent} sent: ${d.accepted} started at once, ${d.queued} queued, ${d.errors} refused) | ${d.messagesPerSecond} msg/s dispatched until the queue was empty (${d.dispatched} timed) | ${d.latency.p50} | ${d.latency.p99} | ${d.latency.max} | ≤ ${TARGET_DISPATCH_P99_MS} ms: ${ok(d.latency.p99, TARGET_DISPATCH_P99_MS)} |`),
    `| host run.delta → SSE message.delta | ${r.deltaRate} deltas/s over 20 turns, sent every ${DELTA_TICK_MS} ms (${r.deltasSent} sent) | ${r.deltasReceived} received | ${r.delta.p50} | ${r.delta.p99} | ${r.delta.max} | ≤ ${TARGET_DELTA_P99_MS} ms: ${ok(r.delta.p99, TARGET_DELTA_P99_MS)} |`,
    '',
    `Event-loop delay during the delta phase (p99 / max, ms): hub ${r.loop.hub ? `${r.loop.hub.p99} / ${r.loop.hub.max}` : 'n/a (inline)'}; bench process (hosts and SSE readers) ${r.loop.bench.p99} / ${r.loop.bench.max}. A delta's latency includes both loops' stalls.`,
    '',
  ].join('\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run({ write: true }).then(() => process.exit(0), (e) => {
    console.error(e);
    process.exit(1);
  });
}
