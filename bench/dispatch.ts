// Dispatch bench: 100 sessions on 20 simulated hosts (in-process protocol
// clients) against a real hub, each latency beside a baseline measured in the
// same run (issue 15):
//  1. POST /sessions/{id}/messages (client send) → the host receives
//     run.start, open loop at each rate of BENCH_RATES (500 and 2,000 msg/s);
//     each host ends a run at once. Baseline: the bare relay
//     (bench/baselines/relay.ts: the same POST, one row committed with one
//     statement, a MessagePack frame to the host's WebSocket), same rates,
//     same body. Also the share started at once and PostgreSQL CPU ms per
//     message (bench/pg-cpu.ts) for both.
//  2. host run.delta → SSE message.delta at each rate of BENCH_DELTA_RATES
//     spread over 20 running turns (20 more hosts, one turn each). Baseline:
//     the bare fan-out (bench/baselines/fanout.ts), the same producer and
//     readers, same rates.
// The hub and each baseline run in processes of their own. The dispatch load
// (client, hosts) runs in this one; the delta load generators in processes of
// their own (bench/delta-child.ts: one producer holding the turns' host
// channels, BENCH_DELTA_READERS SSE reader processes), the same code for hub
// and baseline. BENCH_HUB=inline puts the hub in this process. Each rate runs
// BENCH_ROUNDS rounds (3), baseline and hub in alternating order; its row is
// the round with the median ratio, and every round is listed below the table.
//
//   npx tsx bench/dispatch.ts     (DATABASE_URL for PostgreSQL; BENCH_SECONDS, BENCH_RATES=500,2000 (or BENCH_RATE),
//                                  BENCH_DELTA_RATES=10000,20000,50000,100000 (or BENCH_DELTA_RATE), BENCH_HUB=child|inline,
//                                  BENCH_HUB_LOG_LEVEL=info to log as a production hub does (default warn),
//                                  BENCH_HUB_REDIS=1 (with REDIS_URL): the hub as a node of a cluster, its bus and presence in Redis (REDIS_SHARD_URLS: its bus over shards),
//                                  BENCH_DELTA_READERS=1, BENCH_HUB_PROFILE=file BENCH_HUB_PROFILE_DELTAS=1: profile the delta phases only,
//                                  BENCH_PG_WAITS=1: what the hub's statements wait for, sampled during its measured phases)
import { appendFileSync } from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { decode } from '@msgpack/msgpack';
import { startTestHub, createTestDatabase } from '../test/helpers/hub.js';
import { call } from '../test/helpers/nodes.js';
import { forkHub, type BenchHub, type LoopDelay } from './hub-process.js';
import { LoadClient } from './load-client.js';
import { forkBaseline, type Baseline } from './baselines/fork.js';
import { pgCpu, type PgCpu } from './pg-cpu.js';
import { pgWaits, type PgWaits } from './pg-waits.js';
import { cpuTimes, stolen } from './run.js';
import { pairHost, connectFakeHost, eventually, wsUrl, type FakeHost } from '../test/helpers/host.js';
import { testPrefix } from '../test/helpers/redis.js';
import { DeltaLoad, type PhaseFigure } from './delta-load.js';
import { processCpuMs } from './proc-cpu.js';
import { scrapeHub, dbCallsLine, stagesLine } from './hub-metrics.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import { recording } from './main.js';
import { profiledRound, profileWanted } from './miss-profile.js';
import { judged, type Verdict } from './verdicts.js';

const HOSTS = 20;
const SESSIONS = 100;
/** Targets as multiples of the baseline (issue 15): dispatch p99 ≤ 2× the relay's, deltas ≤ 1.5× the fan-out's. */
const DISPATCH_RATIO = 2;
const STARTED_AT_ONCE = 0.99;
const DELTA_RATIO = 1.5;
/** A baseline slower than this (p99 ms), or losing frames, is saturated: its row measures the machine. */
const BASELINE_SATURATED_MS = 10;
/** The producers send their deltas every this many ms (each turn perTick at a time). */
const DELTA_TICK_MS = Number(process.env.BENCH_DELTA_TICK_MS ?? 2);
/**
 * The bench hub's per-channel frame bound (HOST_FRAMES_PER_SECOND, 2,000 by default): 100,000
 * deltas/s over 20 turns is 5,000 frames/s per host channel, which the default would close.
 */
const BENCH_HOST_FRAMES_PER_SECOND = 20_000;
/**
 * Rounds per rate, each a baseline phase and a hub phase in alternating order; a row is the round
 * whose hub/baseline p99 ratio is the median (the upper one for an even count). On a shared 2-core
 * machine one round's ratio at 2,000 msg/s read 0.67×, 1.73× and 2.44× in three consecutive runs.
 */
const ROUNDS = ((n) => (Number.isFinite(n) ? Math.max(1, n) : 3))(Math.floor(Number(process.env.BENCH_ROUNDS ?? 3)));
const RELAY_APP = 'bench_relay';

type Latency = { p50: number; p99: number; max: number };

export interface DispatchFigure {
  rate: number;
  sent: number;
  /** Answered as started at once (the rest were queued behind a running turn, or refused). */
  accepted: number;
  queued: number;
  errors: number;
  dispatched: number;
  messagesPerSecond: number;
  latency: Latency;
  /** PostgreSQL CPU ms per message sent (undefined without PostgreSQL). */
  pgCpuMsPerMessage?: number;
  /** PostgreSQL WAL bytes written per message sent, the whole cluster during the phase (undefined without PostgreSQL). */
  walBytesPerMessage?: number;
  /** The server process's CPU ms per message sent (the hub, or the relay). */
  serverCpuMsPerMessage?: number;
  /** This bench process's CPU ms per message sent: the HTTP client and the simulated hosts. */
  loadCpuMsPerMessage?: number;
  /** The hub's message-path database calls in the phase: calls per message and mean wall ms per call, by function. */
  dbCalls?: string;
  /** BENCH_PG_WAITS=1: where the hub's statements spent their wall time in the phase (bench/pg-waits.ts). */
  pgWaits?: string;
  /** Where the hub's POST → run.start went, from its own histograms (bench/hub-metrics.ts). */
  stages?: string;
}

export interface DeltaFigure {
  sent: number;
  received: number;
  rate: number;
  latency: Latency;
  /** The server process's CPU µs per delta sent (undefined for a hub in this process). */
  cpuUsPerDelta?: number;
  /** Event-loop delay (ms) of the server (the hub child or the fan-out, each over its own phase with the same 1 ms monitor: bench/loop-window.ts) and of the load generators' processes (the worst reader's). */
  loop: { server?: LoopDelay; producer: LoopDelay; reader: LoopDelay };
}

export interface DispatchResult {
  hub: 'child' | 'inline';
  seconds: number;
  /** Per offered rate: the hub and the bare relay (undefined without PostgreSQL). */
  dispatch: Array<{ rate: number; hub: DispatchFigure; relay?: DispatchFigure; rounds: Array<{ hub: DispatchFigure; relay?: DispatchFigure }>; profile?: string }>;
  /** Per offered rate: the hub and the bare fan-out. */
  deltas: Array<{ rate: number; hub: DeltaFigure; fanout: DeltaFigure; rounds: Array<{ hub: DeltaFigure; fanout: DeltaFigure }>; profile?: string }>;
  /** The highest delta rate where the fan-out kept p99 ≤ 10 ms and the hub ≤ 1.5× it, every delta delivered. */
  bestDeltaRate?: number;
  load: string;
  stolen: string;
  /** Targets 2 and 3 per rate, as the tables word them. */
  verdicts?: Verdict[];
}

const pct = (xs: number[] | Float64Array): Latency => {
  if (!xs.length) return { p50: NaN, p99: NaN, max: NaN };
  const s = Float64Array.from(xs).sort();
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(at(0.5)), p99: r(at(0.99)), max: r(s[s.length - 1]) };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const yieldTurn = () => new Promise((r) => setImmediate(r));
const rates = (list: string | undefined, one: string | undefined, dflt: number[]) =>
  list ? list.split(',').map(Number).filter((n) => n > 0) : one ? [Number(one)] : dflt;

export interface Sim {
  host: FakeHost;
  agentId: string;
  sessions: string[];
}

async function inlineHub(config: { databaseUrl?: string; hostFramesPerSecond: number }): Promise<BenchHub> {
  const t = await startTestHub({ logLevel: 'warn', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, ...config });
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

const wsOpen = (url: string) => new Promise<WebSocket>((res, rej) => {
  const ws = new WebSocket(url);
  ws.once('open', () => res(ws));
  ws.once('error', rej);
});

/** One delta phase's figure from what the load generators measured. */
const deltaFigure = (p: PhaseFigure, cpuMs: number | undefined, server?: LoopDelay): DeltaFigure => ({
  sent: p.sent, received: p.lat.length, rate: Math.round(p.sent / p.elapsed), latency: pct(p.lat), loop: { server, ...p.loop },
  cpuUsPerDelta: cpuMs === undefined ? undefined : Math.round((cpuMs / p.sent) * 1000 * 10) / 10,
});

/** One delta phase with the server's CPU time (sending and draining) read around it. */
async function measured(pid: number | undefined, phase: () => Promise<PhaseFigure>, server?: () => LoopDelay | undefined): Promise<DeltaFigure> {
  const before = processCpuMs(pid);
  const p = await phase();
  const after = processCpuMs(pid);
  return deltaFigure(p, before === undefined || after === undefined ? undefined : after - before, server?.());
}

/**
 * 20 more hosts, their channels held by the delta producer, each with an agent and one running
 * turn: the streams of the delta phase. Answers the turns' sessions, in the producer's host order.
 */
async function deltaTurns(t: BenchHub, key: string, load: DeltaLoad): Promise<string[]> {
  const paired = [];
  for (let i = 0; i < HOSTS; i++) paired.push(await pairHost(t, key, `delta-${i}`));
  const runs = new Map<string, (i: number) => void>();
  await load.hosts(wsUrl(t.url), paired.map((p) => p.credential), (r) => runs.get(r.sessionId)?.(r.i));
  const sessions: string[] = [];
  for (const [i, { hostId }] of paired.entries()) {
    const a = await eventually(async () => {
      const r = await t.api('POST', '/api/v1/agents', { token: key, body: { name: `delta-${i}`, scope: 'private', hostId, engine: 'claude-code' } });
      return r.status === 201 ? r : undefined;
    });
    const s = await t.api('POST', '/api/v1/sessions', { token: key, body: { agentId: a.body.data.id } });
    if (s.status !== 201) throw new Error(`delta session: ${s.status} ${s.text}`);
    const sessionId: string = s.body.data.id;
    const started = new Promise<number>((res) => runs.set(sessionId, res));
    const m = await t.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: key, body: { content: 'stream' } });
    if (m.status !== 202) throw new Error(`delta phase: ${m.status} ${m.text}`);
    sessions[await started] = sessionId;
  }
  return sessions;
}

export async function run(opts: { seconds?: number; rates?: number[]; deltaRates?: number[]; write?: boolean; hub?: 'child' | 'inline' } = {}): Promise<DispatchResult> {
  const seconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5);
  const dispatchRates = opts.rates ?? rates(process.env.BENCH_RATES, process.env.BENCH_RATE, [500, 2000]);
  const deltaRates = opts.deltaRates ?? rates(process.env.BENCH_DELTA_RATES, process.env.BENCH_DELTA_RATE, [10_000, 20_000, 50_000, 100_000]);
  const where = opts.hub ?? (process.env.BENCH_HUB === 'inline' ? 'inline' : 'child');
  const cpu0 = cpuTimes();
  // One database for the hub and the bare relay (a table of its own), so PostgreSQL's CPU is read per database.
  const db = await createTestDatabase();
  const hubConfig = {
    hostFramesPerSecond: BENCH_HOST_FRAMES_PER_SECOND, ...(db.url ? { databaseUrl: db.url } : {}),
    ...(process.env.BENCH_HUB_LOG_LEVEL ? { logLevel: process.env.BENCH_HUB_LOG_LEVEL } : {}),
    ...(process.env.BENCH_HUB_REDIS === '1' && process.env.REDIS_URL ? { redisUrl: process.env.REDIS_URL, redisPrefix: testPrefix(), redisShardUrls: (process.env.REDIS_SHARD_URLS ?? '').split(',').filter(Boolean) } : {}),
  };
  const t = where === 'child' ? await forkHub({ config: hubConfig }) : await inlineHub(hubConfig);
  const relay: Baseline | undefined = db.url ? await forkBaseline('relay', { BENCH_RELAY_DB: db.url }) : undefined;
  const fanout = await forkBaseline('fanout');
  const cpu: PgCpu | undefined = db.url ? await pgCpu(db.url) : undefined;
  // BENCH_PG_WAITS=1: sample the database's wait events during the hub's measured phases (a small load of its own).
  const waits: PgWaits | undefined = db.url && process.env.BENCH_PG_WAITS === '1' ? await pgWaits(db.url) : undefined;
  const load = await DeltaLoad.start();
  const client = new LoadClient();
  const sockets: WebSocket[] = [];
  try {
    const u = { key: t.key };
    const sims = await setup(t, u.key);
    const say = (m: string) => void (process.env.BENCH_VERBOSE && console.error(`dispatch bench: ${m}`));
    say('setup done');
    // BENCH_HUB_PROFILE_DELTAS=1: the hub's CPU profile (BENCH_HUB_PROFILE) covers the delta phases only.
    const profileDeltas = process.env.BENCH_HUB_PROFILE_DELTAS === '1';
    if (!profileDeltas) t.profile();
    const all = sims.flatMap((s) => s.sessions);
    const hostOf = new Map(sims.flatMap((s, i) => s.sessions.map((sid) => [sid, i] as const)));

    // ---------- 1. POST → run.start ----------
    // Per session, the send times of its messages not yet started, oldest first (a session runs them in order).
    const waiting = new Map<string, number[]>();
    let lat: number[] = [];
    let ending = true;
    const started = (sessionId: string) => {
      const t0 = waiting.get(sessionId)?.shift();
      if (t0 !== undefined) lat.push(performance.now() - t0);
    };
    for (const s of sims) {
      onRunStart(s.host, (f) => {
        if (!ending) return;
        started(f.sessionId);
        s.host.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      });
    }
    // The relay's hosts: one WebSocket per simulated host, timing the same way.
    if (relay) {
      for (let i = 0; i < HOSTS; i++) {
        const ws = await wsOpen(`${relay.url.replace('http', 'ws')}/host/${i}`);
        ws.on('message', (data: Buffer) => started((decode(data) as { sessionId: string }).sessionId));
        sockets.push(ws);
      }
    }
    const hubTarget = { url: (sid: string) => `${t.url}/api/v1/sessions/${sid}/messages`, idle: async () => (await t.open()) === 0, app: RELAY_APP, notApp: true };
    const relayTarget = relay && {
      url: (sid: string) => `${relay.url}/m/${hostOf.get(sid)}/${sid}`,
      idle: async () => [...waiting.values()].every((q) => q.length === 0),
      app: RELAY_APP, notApp: false,
    };
    const phase = async (target: typeof hubTarget, r: number, secs = seconds, sampler = waits): Promise<DispatchFigure> => {
      const serverPid = target === hubTarget ? t.pid : relay?.pid;
      lat = [];
      waiting.clear();
      let sent = 0, accepted = 0, queued = 0, errors = 0;
      const inflight: Promise<void>[] = [];
      const cpuBefore = await cpu?.read(target.app, target.notApp);
      const walBefore = await cpu?.walLsn();
      const dbBefore = target === hubTarget ? await scrapeHub(t.url) : undefined;
      // Both targets' measured phases run beside the sampler (its queries load the same machine); the hub's alone are reported.
      const sampling = secs === seconds ? sampler : undefined;
      sampling?.start();
      const serverBefore = processCpuMs(serverPid);
      const loadBefore = process.cpuUsage();
      const start = performance.now();
      const total = Math.round(r * secs);
      let next = 0;
      while (sent < total) {
        const due = start + (sent / r) * 1000;
        const now = performance.now();
        await (due > now + 0.5 ? sleep(due - now - 0.5) : sent % 20 === 0 ? yieldTurn() : undefined); // behind: let the hosts' sockets be read
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
          client.post(target.url(sid), u.key, { content: `m${sent}` }).then(({ status, body }) => {
            if (status !== 202) drop();
            else if (body?.data?.status === 'queued' || body?.status === 'queued') queued++;
            else accepted++;
          }, drop),
        );
      }
      await Promise.all(inflight);
      // Messages that waited start as turns end: wait until nothing is queued or running (a lost frame gives up after 10 s).
      await eventually(target.idle, 10_000, 20).catch(() => undefined);
      const elapsed = (performance.now() - start) / 1000;
      const waited = await sampling?.stop();
      const serverAfter = processCpuMs(serverPid);
      const load = process.cpuUsage(loadBefore);
      const cpuAfter = await cpu?.read(target.app, target.notApp);
      const walAfter = await cpu?.walLsn();
      if (walBefore && walAfter) say(`rate ${r}: WAL ${walBefore.lsn} → ${walAfter.lsn}`);
      const dbAfter = dbBefore && await scrapeHub(t.url);
      const calls = dbBefore && dbAfter && dbCallsLine(dbBefore, dbAfter, sent);
      if (calls) say(`rate ${r}: ${calls}`);
      const stages = dbBefore && dbAfter && lat.length ? stagesLine(dbBefore, dbAfter, lat.reduce((x, y) => x + y, 0) / lat.length) : undefined;
      say(`rate ${r}: sent ${sent}, dispatched ${lat.length} in ${elapsed.toFixed(1)} s`);
      const pgMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : Math.round(((cpuAfter - cpuBefore) / sent) * 1000) / 1000;
      return { rate: r, sent, accepted, queued, errors, dispatched: lat.length, messagesPerSecond: Math.round(lat.length / elapsed), latency: pct(lat), pgCpuMsPerMessage: pgMs,
        walBytesPerMessage: walBefore && walAfter ? Math.round((walAfter.bytes - walBefore.bytes) / sent) : undefined,
        serverCpuMsPerMessage: serverBefore === undefined || serverAfter === undefined ? undefined : Math.round(((serverAfter - serverBefore) / sent) * 1000) / 1000,
        loadCpuMsPerMessage: Math.round(((load.user + load.system) / 1000 / sent) * 1000) / 1000, ...(calls ? { dbCalls: calls } : {}), ...(stages ? { stages } : {}), ...(waited ? { pgWaits: waited } : {}) };
    };
    // Warm-up (JIT, pools, the tables' first pages and statistics), not reported: at 50 msg/s for 1 s the
    // first measured phase still carried it (p99 of 90–360 ms at 500 msg/s for the relay and the hub alike).
    await phase(hubTarget, 300, 3);
    if (relayTarget) await phase(relayTarget, 300, 3);
    const dispatch: DispatchResult['dispatch'] = [];
    for (const r of dispatchRates) {
      const rounds: DispatchResult['dispatch'][number]['rounds'] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Alternating order, so neither side always runs on the tables and caches the other warmed.
        const hubFirst = i % 2 === 1;
        const early = hubFirst ? await phase(hubTarget, r) : relayTarget && (await phase(relayTarget, r));
        const late = hubFirst ? relayTarget && (await phase(relayTarget, r)) : await phase(hubTarget, r);
        rounds.push(hubFirst ? { hub: early!, relay: late } : { hub: late!, relay: early });
      }
      const med = medianRound(rounds, (x) => x.hub.latency.p99 / (x.relay?.latency.p99 ?? 1));
      const row: DispatchResult['dispatch'][number] = { rate: r, relay: med.relay, hub: med.hub, rounds };
      const missed = dispatchMissed(row);
      if (t.cpu && profileWanted(missed)) {
        // A message's wait is PostgreSQL's as much as the hub's: the round also samples where the hub's statements spent their time.
        const sampler = waits ?? (db.url ? await pgWaits(db.url) : undefined);
        try {
          row.profile = await profiledRound(`The hub's CPU profile over one more hub phase at ${r} msg/s (target 2 ${missed ? 'missed' : 'not missed'} at this rate; this phase is not one of the rounds above).`,
            [{ name: 'hub', profiler: t.cpu }], async () => {
              const f = await phase(hubTarget, r, seconds, sampler);
              return `Its figures: p99 ${f.latency.p99} ms, ${f.accepted} of ${f.sent} started at once, hub CPU ${f.serverCpuMsPerMessage ?? 'n/a'} ms per message${f.stages ? `; where its POST → run.start went: ${f.stages}` : ''}${f.pgWaits ? `; where the hub's statements spent their wall time in PostgreSQL (its active backends sampled every 2 ms, bench/pg-waits.ts): ${f.pgWaits}` : ''}.`;
            });
        } finally {
          if (sampler !== waits) await sampler?.close();
        }
      }
      dispatch.push(row);
    }

    // ---------- 2. run.delta → SSE message.delta ----------
    ending = false;
    const streams = await deltaTurns(t, u.key, load);
    say('turns for deltas running');
    await load.open('hub', streams.map((sid) => ({ url: `${t.url}/api/v1/sessions/${sid}/events`, headers: { authorization: `Bearer ${u.key}` } })));
    await load.open('fanout', streams.map((_, i) => ({ url: `${fanout.url}/events/${i}`, headers: {} })));
    await load.fanout(fanout.url, streams.length);
    await sleep(200);
    if (profileDeltas) t.profile();
    const deltas: DispatchResult['deltas'] = [];
    // Each server's event-loop delay over its phase: both run the same monitor in the same windows.
    let serverLoop: LoopDelay | undefined;
    const loopOf = (server: { loopDelay?: (op: 'reset' | 'read') => Promise<LoopDelay | undefined> }) => ({
      before: async () => void (await server.loopDelay?.('reset')), after: async () => void (serverLoop = await server.loopDelay?.('read')),
    });
    const fanPhase = (r: number) => {
      serverLoop = undefined;
      return measured(fanout.pid, () => load.phase('fanout', r, seconds, DELTA_TICK_MS, loopOf(fanout)), () => serverLoop);
    };
    const hubPhase = (r: number) => {
      serverLoop = undefined;
      return measured(t.pid, () => load.phase('hub', r, seconds, DELTA_TICK_MS, loopOf(t)), () => serverLoop);
    };
    // Warm-up, not reported (JIT, the readers' buffers): the first measured round at the first rate read
    // 5.19× where its later rounds read 2.94× and 1.05×, with the hub's CPU per delta 21.6 µs against 8.6 µs at the next rate.
    if (deltaRates.length) for (const target of ['fanout', 'hub'] as const) await load.phase(target, deltaRates[0], 2, DELTA_TICK_MS);
    for (const r of deltaRates) {
      const rounds: DispatchResult['deltas'][number]['rounds'] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const hubFirst = i % 2 === 1;
        const early = await (hubFirst ? hubPhase(r) : fanPhase(r));
        const late = await (hubFirst ? fanPhase(r) : hubPhase(r));
        const [hub, fan] = hubFirst ? [early, late] : [late, early];
        say(`deltas ${r}/s round ${i + 1}: fan-out p99 ${fan.latency.p99} (${fan.cpuUsPerDelta} µs CPU/delta), hub p99 ${hub.latency.p99} (${hub.cpuUsPerDelta} µs CPU/delta)`);
        rounds.push({ hub, fanout: fan });
      }
      const med = medianRound(rounds, (x) => x.hub.latency.p99 / x.fanout.latency.p99);
      const row: DispatchResult['deltas'][number] = { rate: r, fanout: med.fanout, hub: med.hub, rounds };
      const missed = deltaMissed(row);
      if (t.cpu && profileWanted(missed)) {
        row.profile = await profiledRound(`The hub's CPU profile over one more hub phase at ${r} deltas/s (target 3 ${missed ? 'missed' : 'not missed'} at this rate; this phase is not one of the rounds above).`,
          [{ name: 'hub', profiler: t.cpu }], async () => {
            const f = await hubPhase(r);
            return `Its figures: p99 ${f.latency.p99} ms, ${f.received} of ${f.sent} delivered, hub CPU ${f.cpuUsPerDelta ?? 'n/a'} µs per delta.`;
          });
      }
      deltas.push(row);
    }
    await load.end();

    const good = deltas.filter((d) => !behind(d) && !deltaSaturated(d.fanout) && !deltaMissed(d));
    const result: DispatchResult = {
      hub: where, seconds, dispatch, deltas, bestDeltaRate: good.length ? Math.max(...good.map((d) => d.rate)) : undefined,
      load: loadavg().map((x) => x.toFixed(2)).join(' '), stolen: stolen(cpu0, cpuTimes()),
    };
    result.verdicts = verdictsOf(result);
    console.log(JSON.stringify(result));
    if (opts.write) record(result);
    for (const s of sims) s.host.close();
    return result;
  } finally {
    for (const ws of sockets) ws.close();
    client.close();
    await load.close();
    await cpu?.close();
    await waits?.close();
    await fanout.close();
    await relay?.close();
    await t.close();
    await db.drop().catch(() => undefined);
  }
}

/** The hub's message-path database calls so far (count and seconds, by function), from its /metrics. */
/** The round whose ratio is the median (the upper one of an even count; an undefined ratio sorts last). */
function medianRound<T>(rounds: T[], ratio: (r: T) => number): T {
  const key = (r: T) => (Number.isFinite(ratio(r)) ? ratio(r) : Infinity);
  return [...rounds].sort((a, b) => key(a) - key(b))[Math.floor(rounds.length / 2)]!;
}

/** Each round's p99s and their ratio, in the order run. */
const roundsLine = (rounds: Array<{ hub: { latency: Latency } } & ({ relay?: { latency: Latency } } | { fanout: { latency: Latency } })>) =>
  rounds.map((r, i) => {
    const base = 'relay' in r ? r.relay : 'fanout' in r ? r.fanout : undefined;
    return `${i + 1}: ${base ? `${base.latency.p99} / ${r.hub.latency.p99} ms = ${x(r.hub.latency.p99, base.latency.p99)}` : `hub ${r.hub.latency.p99} ms`}`;
  }).join('; ');

/** The producers sent less than 90 % of the offered rate in either phase: the rows do not compare the same load. */
const behind = (d: DispatchResult['deltas'][number]) => d.fanout.rate < 0.9 * d.rate || d.hub.rate < 0.9 * d.rate;
const deltaSaturated = (f: DeltaFigure) => !(f.latency.p99 <= BASELINE_SATURATED_MS) || f.received < f.sent;
const relaySaturated = (f: DispatchFigure) => !(f.latency.p99 <= BASELINE_SATURATED_MS) || f.dispatched < f.sent;
const ratioMet = (h: DispatchFigure, b: DispatchFigure) => h.latency.p99 <= DISPATCH_RATIO * b.latency.p99;
const startedAtOnceMet = (h: DispatchFigure) => h.accepted / h.sent >= STARTED_AT_ONCE;
/** Target 2 at one rate, as the table words it: fewer than 99 % started at once, or p99 over 2× a relay that was not saturated. */
export const dispatchMissed = (d: Pick<DispatchResult['dispatch'][number], 'hub' | 'relay'>) =>
  !startedAtOnceMet(d.hub) || (!!d.relay && !relaySaturated(d.relay) && !ratioMet(d.hub, d.relay));
/** Target 3 at one rate, as the table words it: the load sent, the fan-out not saturated, and the hub over 1.5× it or a delta lost. */
export const deltaMissed = (d: DispatchResult['deltas'][number]) =>
  !behind(d) && !deltaSaturated(d.fanout) && !(d.hub.latency.p99 <= DELTA_RATIO * d.fanout.latency.p99 && d.hub.received === d.hub.sent);
/** Targets 2 and 3 at each rate measured: met, missed, or no verdict where the baseline was saturated or the load not sent. */
export function verdictsOf(r: Pick<DispatchResult, 'dispatch' | 'deltas'>): Verdict[] {
  const out: Verdict[] = [];
  for (const d of r.dispatch) {
    const h = d.hub, b = d.relay;
    const target = `2. dispatch at ${d.rate} msg/s: p99 ≤ ${DISPATCH_RATIO}× the bare relay`;
    if (!b) out.push({ target, outcome: 'no verdict', figure: 'no relay (it needs PostgreSQL)' });
    else if (relaySaturated(b)) out.push({ target, outcome: 'no verdict', figure: `the relay saturated (p99 ${b.latency.p99} ms, ${b.sent - b.dispatched} lost); hub p99 ${h.latency.p99} ms` });
    else out.push({ target, outcome: judged(ratioMet(h, b)), figure: `${x(h.latency.p99, b.latency.p99)} (hub ${h.latency.p99} ms, relay ${b.latency.p99} ms)` });
    out.push({ target: `2. dispatch at ${d.rate} msg/s: ≥ ${STARTED_AT_ONCE * 100} % started at once`, outcome: judged(startedAtOnceMet(h)), figure: `${((h.accepted / h.sent) * 100).toFixed(1)} %` });
  }
  for (const d of r.deltas) {
    const f = d.fanout, h = d.hub;
    const target = `3. deltas at ${d.rate}/s: p99 ≤ ${DELTA_RATIO}× the bare fan-out, all delivered`;
    if (behind(d)) out.push({ target, outcome: 'no verdict', figure: `the load generator behind (${f.rate}/s and ${h.rate}/s sent)` });
    else if (deltaSaturated(f)) out.push({ target, outcome: 'no verdict', figure: `the fan-out saturated (p99 ${f.latency.p99} ms, ${f.sent - f.received} lost); hub p99 ${h.latency.p99} ms` });
    else out.push({ target, outcome: judged(!deltaMissed(d)), figure: `${x(h.latency.p99, f.latency.p99)} (hub ${h.latency.p99} ms, fan-out ${f.latency.p99} ms), ${h.received} of ${h.sent} delivered` });
  }
  return out;
}

const x = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : 'n/a');

function record(r: DispatchResult): void {
  const machine = `nproc ${cpus().length} (${cpus()[0]?.model?.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, load average at the end ${r.load}, CPU stolen by the hypervisor during the module ${r.stolen}`;
  const lat = (l: Latency) => `${l.p50} / ${l.p99} / ${l.max}`;
  const dispatchRow = (d: DispatchResult['dispatch'][number]) => {
    const h = d.hub, b = d.relay;
    const once = h.accepted / h.sent;
    const cmp = !b ? 'no relay (needs PostgreSQL)'
      : relaySaturated(b) ? `relay saturated (p99 ${b.latency.p99} ms, ${b.sent - b.dispatched} lost): measures the machine, not the hub`
      : judged(ratioMet(h, b));
    return `| ${d.rate} msg/s | ${b ? `${lat(b.latency)} (${b.dispatched}/${b.sent} delivered)` : 'n/a'} | ${lat(h.latency)} (${h.dispatched}/${h.sent} started, ${h.messagesPerSecond} msg/s) | ${b ? x(h.latency.p99, b.latency.p99) : 'n/a'} | ≤ ${DISPATCH_RATIO}×: ${cmp} | ${(once * 100).toFixed(1)} % (${h.queued} queued, ${h.errors} refused): ${judged(startedAtOnceMet(h))} | ${h.pgCpuMsPerMessage ?? 'n/a'} | ${b?.pgCpuMsPerMessage ?? 'n/a'} | ${h.walBytesPerMessage ?? 'n/a'} / ${b?.walBytesPerMessage ?? 'n/a'} | ${h.serverCpuMsPerMessage ?? 'n/a'} / ${b?.serverCpuMsPerMessage ?? 'n/a'} | ${h.loadCpuMsPerMessage ?? 'n/a'} / ${b?.loadCpuMsPerMessage ?? 'n/a'} |`;
  };
  const deltaRow = (d: DispatchResult['deltas'][number]) => {
    const f = d.fanout, h = d.hub;
    const cmp = behind(d) ? `load generator behind (${f.rate}/s and ${h.rate}/s sent of ${d.rate}/s): measures the producer process, not the hub`
      : deltaSaturated(f) ? `fan-out saturated (p99 ${f.latency.p99} ms, ${f.sent - f.received} lost): measures the machine, not the hub`
      : judged(!deltaMissed(d));
    const gen = (g: DeltaFigure) => `${g.loop.producer.p99} / ${g.loop.reader.p99}`;
    return `| ${d.rate}/s | ${lat(f.latency)} | ${f.received}/${f.sent} (${f.rate}/s sent) | ${lat(h.latency)} | ${h.received}/${h.sent} (${h.rate}/s sent) | ${x(h.latency.p99, f.latency.p99)} | ≤ ${DELTA_RATIO}×, all delivered: ${cmp} | ${h.cpuUsPerDelta ?? 'n/a'} / ${f.cpuUsPerDelta ?? 'n/a'} | ${h.loop.server ? `${h.loop.server.p99} / ${h.loop.server.max}` : 'n/a'} | ${f.loop.server ? `${f.loop.server.p99} / ${f.loop.server.max}` : 'n/a'} | ${gen(h)} | ${gen(f)} |`;
  };
  appendFileSync(new URL('./RESULTS.md', import.meta.url), [
    '',
    `## Dispatch and streaming (bench/dispatch.ts) — ${new Date().toISOString()}`,
    '',
    `Machine: ${machine}. ${SESSIONS} sessions on ${HOSTS} simulated hosts (in-process protocol clients, capacity ${SESSIONS / HOSTS} each, each run ended at once); ${r.hub === 'child' ? 'hub in a child process' : 'hub in the bench process'}, each baseline in a child process of its own; the dispatch client and hosts in the bench process; the delta producer (holding the turns' host channels) and ${process.env.BENCH_DELTA_READERS ?? 1} SSE reader process(es) each in a process of its own, latency measured on the wall clock shared by the processes. ${r.seconds} s per phase, open loop.`,
    '',
    'POST /messages → host receives run.start (p50 / p99 / max ms). Baseline: the bare relay (bench/baselines/relay.ts: same POST and body, one row committed with one statement, a MessagePack frame to the host\'s WebSocket). PostgreSQL CPU: utime + stime of the database\'s backends per message sent (the wait sampler\'s own backend left out); WAL: bytes the cluster\'s WAL grew by during the phase, per message sent. The server\'s CPU: utime + stime of the hub\'s (or the relay\'s) process per message sent; the load generator\'s: this bench process (HTTP client and simulated hosts).',
    '',
    '| offered | bare relay | hub | hub p99 / relay p99 | target | started at once (≥ 99 %) | PG CPU ms/msg hub | PG CPU ms/msg relay | WAL bytes/msg hub / relay | server CPU ms/msg hub / relay | load generator CPU ms/msg, hub / relay phase |',
    '|---|---|---|---:|---|---|---:|---:|---|---|---|',
    ...r.dispatch.map(dispatchRow),
    '',
    `Each rate ran ${r.dispatch[0]?.rounds.length ?? ROUNDS} round(s), the relay first in odd rounds and the hub first in even ones; the row above is the round with the median p99 ratio (BENCH_ROUNDS). Every round's relay p99 / hub p99:`,
    '',
    ...r.dispatch.map((d) => `- ${d.rate} msg/s: ${roundsLine(d.rounds)}`),
    '',
    ...r.dispatch.filter((d) => d.hub.dbCalls).map((d) => `The hub's database calls at ${d.rate} msg/s (its /metrics, hub_db_call_duration_seconds): ${d.hub.dbCalls}.`),
    ...r.dispatch.filter((d) => d.hub.stages).map((d) => `Where the hub's POST → run.start went at ${d.rate} msg/s (its /metrics: hub_group_commit_seconds, hub_dispatch_latency_seconds; per message): ${d.hub.stages}.`),
    ...r.dispatch.filter((d) => d.hub.pgWaits).map((d) => `Where the hub's statements spent their wall time at ${d.rate} msg/s (its active backends in pg_stat_activity, sampled every 2 ms, in the relay's phases too so both carry the sampler's load; BENCH_PG_WAITS=1): ${d.hub.pgWaits}.`),
    ...r.dispatch.flatMap((d) => (d.profile ? [d.profile] : [])),
    '',
    `host run.delta → SSE message.delta over 20 turns, sent every ${DELTA_TICK_MS} ms (p50 / p99 / max ms). Baseline: the bare fan-out (bench/baselines/fanout.ts: WebSocket frames to SSE readers, one corked write per reader per event-loop turn, each event shaped as the spec asks and as the hub sends it: an \`id:\` line, \`sessionId\` and \`status\` in its data), the same producer and reader code. Each server runs the same 1 ms event-loop monitor over its own phases (bench/loop-window.ts), so both pay its timer.`,
    '',
    '| offered | bare fan-out | delivered | hub | delivered | hub p99 / fan-out p99 | target | server CPU µs per delta, hub / fan-out | hub loop delay p99 / max ms | fan-out loop delay p99 / max ms | producer / reader loop p99 ms, hub phase | producer / reader loop p99 ms, fan-out phase |',
    '|---|---|---:|---|---:|---:|---|---:|---|---|---|---|',
    ...r.deltas.map(deltaRow),
    '',
    `As for dispatch, each rate ran ${r.deltas[0]?.rounds.length ?? ROUNDS} round(s) in alternating order and the row is the median round. Every round's fan-out p99 / hub p99:`,
    '',
    ...r.deltas.map((d) => `- ${d.rate}/s: ${roundsLine(d.rounds)}`),
    ...r.deltas.flatMap((d) => (d.profile ? [d.profile] : [])),
    '',
    `Highest delta rate where both phases were sent at ≥ 90 % of the offered rate, the fan-out kept p99 ≤ ${BASELINE_SATURATED_MS} ms with nothing lost and the hub's p99 ≤ ${DELTA_RATIO}× it with every delta delivered: ${r.bestDeltaRate ? `${r.bestDeltaRate}/s` : 'none of the rates measured'}.`,
    '',
  ].join('\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run({ write: recording() }).then(() => process.exit(0), (e) => {
    console.error(e);
    process.exit(1);
  });
}
