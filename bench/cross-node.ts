// Cross-node dispatch: a host's channel on node A, clients posting messages
// on node B, at a fixed rate (default 1,000 messages/s); measured from the
// client's send to the host receiving `run.start`. The baseline in the same
// run: clients on node A itself; the target (issue 15) is cross-node p99 ≤
// same-node p99 + 3 ms. Each hub node runs in a process of its own
// (bench/hub-child.ts) on one PostgreSQL database and one Redis (needs
// DATABASE_URL and REDIS_URL); this process holds the client and the host (an
// in-process protocol client that ends each run at once). The measured rate
// runs BENCH_ROUNDS rounds in alternating order; each phase also reports the
// CPU per message and the event-loop delay of both nodes and this process, so
// a slow baseline says which process it was.
//
//   npx tsx bench/cross-node.ts        (BENCH_SECONDS, BENCH_RATE, BENCH_ROUNDS override;
//                                       BENCH_DUMP=1 prints each phase's messages over 5 ms as [sent at ms, latency ms])
import { appendFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { runIfMain, recording } from './main.js';
import { createTestDatabase } from '../test/helpers/hub.js';
import { forkHub, type BenchHub } from './hub-process.js';
import { LoadClient } from './load-client.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from '../test/helpers/host.js';
import { redisUrlOrSkip, testPrefix } from '../test/helpers/redis.js';
import { encode } from '@msgpack/msgpack';
import type { Bus } from '../src/bus/bus.js';
import { LocalBus } from '../src/bus/local.js';
import { RedisBus } from '../src/bus/redis.js';
import { hostsTopic } from '../src/hosts/gateway-impl.js';
import { Redis } from 'ioredis';
import { redisStats, topCalls } from './redis-stats.js';
import { processCpuMs } from './proc-cpu.js';
import { scrapeHub, dbCallsLine, stagesLine } from './hub-metrics.js';
import { profiledRound, profileWanted } from './miss-profile.js';
import { judged, type Verdict } from './verdicts.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface Figure {
  target: string;
  rate: number;
  sent: number;
  dispatched: number;
  errors: number;
  p50ms: number;
  p99ms: number;
  maxms: number;
  /** Redis commands processed (a script's inner ones included) per message sent, both nodes and the hosts' heartbeats included. */
  redisCommandsPerMsg?: number;
  /** Redis CPU µs per message sent. */
  redisCpuUsPerMsg?: number;
  /** The Redis commands called most per message (INFO commandstats: a script's inner commands count). */
  redisTop?: string;
  /** CPU ms per message sent of node A, node B and this bench process (client and hosts). */
  cpuMsPerMsg?: { a?: number; b?: number; bench: number };
  /** Event-loop delay p99 (ms) over the phase of node A, node B and this bench process. */
  loopP99?: { a?: number; b?: number; bench: number };
  /** Where the posting node's POST → run.start went (its /metrics), and its database calls per message. */
  stages?: string;
  dbCalls?: string;
  /** Event-loop delay max (ms) over the phase, as loopP99. */
  loopMax?: { a?: number; b?: number; bench: number };
}

export interface CrossNodeResult {
  skipped?: string;
  seconds: number;
  /** The routing hop alone: a run.start-sized frame published on a node's topic (`hostframes:<node>`) by another node. */
  hop: Figure[];
  /** End to end through the API: client send → host receives run.start. */
  figures: Figure[];
  /** Every round at the measured rate (same and cross in alternating order); figures[0..1] is the median round by cross − same. */
  rounds?: Array<{ same: Figure; cross: Figure }>;
  /** Cross-node p99 over same-node p99, end to end. */
  ratioP99?: number;
  /** Cross-node p99 minus same-node p99 (ms), end to end at the measured rate: the target's figure. */
  deltaP99?: number;
  /** Both nodes' CPU profiles over one more cross-node phase, in text, when the target was missed (bench/miss-profile.ts). */
  profile?: string;
  /** Target 5, as crossVerdict words it. */
  verdicts?: Verdict[];
}

/** Open-loop publishes at `rate` from `from` to a subscriber on `to`; latency publish → delivery. */
async function busHop(target: string, from: Bus, to: Bus, rate: number, seconds: number): Promise<Figure> {
  const topic = hostsTopic(`bench-${randomBytes(4).toString('hex')}`);
  const lat: number[] = [];
  const sentAt = new Map<number, number>();
  const off = to.subscribe(topic, (p) => {
    const seq = new DataView(p.buffer, p.byteOffset, 4).getUint32(0);
    const t0 = sentAt.get(seq);
    if (t0 !== undefined) lat.push(performance.now() - t0);
  });
  await to.ready();
  // A dispatch-sized payload: a run.start frame with a 300-character prompt.
  const body = encode({ k: 'send', h: 'hst_bench', frame: { t: 'run.start', runId: 'run_x', sessionId: 'ses_x', engine: 'claude-code', prompt: 'p'.repeat(300), workDir: 'w', mode: 'default' } });
  const total = Math.round(rate * seconds);
  const start = performance.now();
  for (let n = 0; n < total; n++) {
    const wait = start + (n * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const buf = new Uint8Array(4 + body.length);
    new DataView(buf.buffer).setUint32(0, n);
    buf.set(body, 4);
    sentAt.set(n, performance.now());
    from.publish(topic, buf);
  }
  await new Promise((r) => setTimeout(r, 500));
  off();
  return { target, rate, sent: total, dispatched: lat.length, errors: total - lat.length, p50ms: r2(pct(lat, 0.5)), p99ms: r2(pct(lat, 0.99)), maxms: r2(Math.max(...lat)) };
}

const SESSIONS = 100;
/**
 * Hosts on node A, as in bench/dispatch.ts. Not one host of capacity 1,000: every accept and run
 * end of a host takes that host's row lock, so one host at 1,000 msg/s measures that lock, not the hop.
 */
const HOSTS = 20;
const HOST_CAPACITY = 50;
const TARGET_P99_MS = 15;
/** Cross-node p99 may exceed the same-node p99 of the same run by this much (issue 15). */
const TARGET_OVER_SAME_MS = 3;
/** A same-node p99 above this, or messages not dispatched, is a saturated baseline. */
const BASELINE_SATURATED_MS = 10;
/** Rounds at the measured rate, same and cross in alternating order; the median round by cross − same is reported (BENCH_ROUNDS). */
const ROUNDS = ((n) => (Number.isFinite(n) ? Math.max(1, n) : 3))(Math.floor(Number(process.env.BENCH_ROUNDS ?? 3)));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * p))] : NaN;
};
const r2 = (x: number) => Math.round(x * 100) / 100;

export async function run(opts: { seconds?: number; rate?: number; write?: boolean } = {}): Promise<CrossNodeResult> {
  const seconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5);
  const rate = opts.rate ?? Number(process.env.BENCH_RATE ?? 1000);
  const low = Number(process.env.BENCH_RATE_LOW ?? 40);
  const redis = await redisUrlOrSkip();
  const skipped = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set' : undefined;
  if (skipped) {
    const r = { skipped, seconds, hop: [], figures: [] };
    if (opts.write) writeResults(r, rate);
    return r;
  }
  const hop: Figure[] = [];
  {
    const local = new LocalBus();
    const prefix = testPrefix();
    const [na, nb] = [await RedisBus.connect((redis as { url: string }).url, { prefix }), await RedisBus.connect((redis as { url: string }).url, { prefix })];
    try {
      hop.push(await busHop('LocalBus (one node)', local, local, rate, seconds));
      hop.push(await busHop('RedisBus, node B → node A', nb, na, rate, seconds));
    } finally {
      await Promise.all([local.close(), na.close(), nb.close()]);
    }
  }
  const db = await createTestDatabase();
  const shared = { databaseUrl: db.url, redisUrl: (redis as { url: string }).url, redisPrefix: testPrefix(), rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 };
  let a: BenchHub | undefined;
  let b: BenchHub | undefined;
  const hosts: FakeHost[] = [];
  const client = new LoadClient();
  const counters = new Redis((redis as { url: string }).url, { lazyConnect: true });
  try {
    await counters.connect();
    a = await forkHub({ config: { ...shared, nodeId: 'bench-a' }, name: 'A' });
    b = await forkHub({ config: { ...shared, nodeId: 'bench-b', adminApiKey: a.adminKey }, user: false, name: 'B' });
    const u = { key: a.key };
    const sent = new Map<string, number>();
    const lat: number[] = [];
    const slow: Array<[number, number]> = [];
    let phaseStart = 0;
    // The hosts: note when run.start arrives, end the run at once.
    const agents: Array<{ id: string }> = [];
    for (let k = 0; k < HOSTS; k++) {
      const { credential } = await pairHost(a, u.key, `bench-${k}`);
      const h = await connectFakeHost(a, credential, { capacity: HOST_CAPACITY });
      hosts.push(h);
      h.ws.on('message', () => {
        const f = h.frames.pop() as any; // keep memory flat: frames are consumed here
        if (!f || f.t !== 'run.start') return;
        const t0 = sent.get(f.sessionId);
        if (t0 !== undefined) {
          lat.push(performance.now() - t0);
          if (process.env.BENCH_DUMP) slow.push([Math.round(t0 - phaseStart), Math.round(performance.now() - t0)]);
          sent.delete(f.sessionId);
        }
        h.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      });
      const hostId = h.hostId!;
      agents.push(await eventually(async () => {
        const r = await a!.api('POST', '/api/v1/agents', { token: u.key, body: { name: `bench-${k}`, scope: 'private', hostId, engine: 'claude-code', workDir: 'w' } });
        return r.status === 201 ? r.body.data : undefined;
      }, 10_000, 50));
    }
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const r = await a.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId: agents[i % HOSTS].id, title: `s${i}` } });
      if (r.status !== 201) throw new Error(`session: ${r.status} ${r.text}`);
      sessions.push(r.body.data.id);
    }

    const measure = async (target: string, t: BenchHub, rate: number): Promise<Figure> => {
      lat.length = 0;
      sent.clear();
      let n = 0;
      let errors = 0;
      const total = Math.round(rate * seconds);
      const r0 = await redisStats(counters);
      // Where the phase's CPU went and whose event loop lagged: a saturated baseline says which process saturated.
      await Promise.all([a!.loopDelay?.('reset'), b!.loopDelay?.('reset')]);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const [a0, b0] = await Promise.all([scrapeHub(a!.url), scrapeHub(b!.url)]);
      const cpu0 = { a: processCpuMs(a!.pid), b: processCpuMs(b!.pid), bench: process.cpuUsage() };
      const start = performance.now();
      phaseStart = start;
      slow.length = 0;
      const inflight: Promise<void>[] = [];
      // Open loop: message i leaves at start + i/rate whatever the answers do.
      while (n < total) {
        const due = start + (n * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        const sid = sessions[n % sessions.length];
        n++;
        if (sent.has(sid)) {
          errors++; // the previous message of this session is still not dispatched: count it, skip
          continue;
        }
        sent.set(sid, performance.now());
        inflight.push(
          client.post(`${t.url}/api/v1/sessions/${sid}/messages`, u.key, { content: `m${n} ${randomBytes(4).toString('hex')}` }).then(
            (r) => void (r.status !== 202 && errors++),
            () => void errors++,
          ),
        );
      }
      await Promise.all(inflight);
      await eventually(async () => sent.size === 0, 5000, 20).catch(() => undefined);
      loop.disable();
      const [la, lb] = await Promise.all([a!.loopDelay?.('read'), b!.loopDelay?.('read')]);
      const cpu1 = { a: processCpuMs(a!.pid), b: processCpuMs(b!.pid), bench: process.cpuUsage(cpu0.bench) };
      const per = (x0: number | undefined, x1: number | undefined) => (x0 === undefined || x1 === undefined ? undefined : Math.round(((x1 - x0) / total) * 1000) / 1000);
      const r1 = await redisStats(counters);
      const [a1, b1] = await Promise.all([scrapeHub(a!.url), scrapeHub(b!.url)]);
      const [m0, m1] = t === a ? [a0, a1] : [b0, b1]; // the posting node's
      if (process.env.BENCH_DUMP) console.log(target, rate, JSON.stringify(slow.filter(([, l]) => l > 5)));
      return {
        target, rate, sent: total, dispatched: lat.length, errors, p50ms: r2(pct(lat, 0.5)), p99ms: r2(pct(lat, 0.99)), maxms: r2(Math.max(...lat)),
        redisCommandsPerMsg: r2((r1.commands - r0.commands) / total), redisCpuUsPerMsg: r2(((r1.cpuMs - r0.cpuMs) * 1000) / total), redisTop: topCalls(r0, r1, total),
        cpuMsPerMsg: { a: per(cpu0.a, cpu1.a), b: per(cpu0.b, cpu1.b), bench: Math.round(((cpu1.bench.user + cpu1.bench.system) / 1000 / total) * 1000) / 1000 },
        loopP99: { a: la?.p99, b: lb?.p99, bench: r2(loop.percentile(99) / 1e6) },
        loopMax: { a: la?.max, b: lb?.max, bench: r2(loop.max / 1e6) },
        stages: lat.length ? stagesLine(m0, m1, lat.reduce((x, y) => x + y, 0) / lat.length) : undefined,
        dbCalls: `node A: ${dbCallsLine(a0, a1, total) || 'none'}; node B: ${dbCallsLine(b0, b1, total) || 'none'}`,
      };
    };

    // Warm-up, not reported: both nodes' request paths, JIT and database plans at the measured rate
    // (a cold node's first few hundred milliseconds are slower, and the phase measured first would carry them).
    await measure('warm-up (node A)', a, low);
    await measure('warm-up (node B)', b, low);
    await measure('warm-up (node A)', a, rate);
    await measure('warm-up (node B)', b, rate);
    a.profile(); // BENCH_HUB_PROFILE: each node's CPU profile of the measured phases
    b.profile();
    // Rounds in alternating order (as bench/dispatch.ts): one phase's p99 at this rate is set by a few
    // stalls of the shared machine (a collection, a descheduled process), so one pair is a coin toss.
    const rounds: Array<{ same: Figure; cross: Figure }> = [];
    const phase = { same: () => measure('same node: client on A, host on A', a!, rate), cross: () => measure('cross node: client on B, host on A', b!, rate) };
    for (let k = 0; k < ROUNDS; k++) {
      const round = {} as { same: Figure; cross: Figure };
      for (const p of k % 2 === 0 ? (['same', 'cross'] as const) : (['cross', 'same'] as const)) round[p] = await phase[p]();
      rounds.push(round);
    }
    const { same, cross } = [...rounds].sort((u, v) => (u.cross.p99ms - u.same.p99ms) - (v.cross.p99ms - v.same.p99ms))[Math.floor(rounds.length / 2)];
    // Below saturation, where the difference is the cross-node hop and not queueing.
    const sameLow = await measure('same node: client on A, host on A', a, low);
    const crossLow = await measure('cross node: client on B, host on A', b, low);
    const result: CrossNodeResult = { seconds, hop, figures: [same, cross, sameLow, crossLow], rounds, ratioP99: r2(cross.p99ms / same.p99ms), deltaP99: r2(cross.p99ms - same.p99ms) };
    const missed = crossMissed(result);
    result.verdicts = [crossTarget(result)];
    if (a.cpu && b.cpu && profileWanted(missed)) {
      result.profile = await profiledRound(`Both nodes' CPU profiles over one more cross-node phase at ${rate}/s (the target ${missed ? 'missed' : 'not missed'}; this phase is not one of the rounds above).`,
        [{ name: 'node A (the host\'s node)', profiler: a.cpu }, { name: 'node B (the client\'s node)', profiler: b.cpu }], async () => {
          const f = await phase.cross();
          return `Its figures: p99 ${f.p99ms} ms, ${f.dispatched} of ${f.sent} dispatched.`;
        });
    }
    if (opts.write) writeResults(result, rate);
    return result;
  } finally {
    for (const h of hosts) h.close();
    client.close();
    counters.disconnect();
    await b?.close();
    await a?.close();
    await db.drop();
  }
}

/** The same-node phase cannot judge the target: its p99 over the bench's line, or messages not dispatched. */
const sameSaturated = (same: Figure) => !(same.p99ms <= BASELINE_SATURATED_MS) || same.dispatched < same.sent;
/** Issue 15's target 5 missed: a baseline that can judge it, and cross − same over 3 ms or a message not dispatched. */
export const crossMissed = (r: CrossNodeResult) => !sameSaturated(r.figures[0]) && !(r.deltaP99! <= TARGET_OVER_SAME_MS && r.figures[1].dispatched === r.figures[1].sent);

/** Target 5 in the suite's table. */
export function crossTarget(r: CrossNodeResult): Verdict {
  const [same, cross] = r.figures;
  const target = `5. cross-node dispatch at ${same.rate}/s: p99 ≤ same-node p99 + ${TARGET_OVER_SAME_MS} ms`;
  if (sameSaturated(same)) return { target, outcome: 'no verdict', figure: `the same-node baseline saturated (p99 ${same.p99ms} ms); cross − same ${r.deltaP99} ms` };
  return { target, outcome: judged(!crossMissed(r)), figure: `cross − same ${r.deltaP99} ms (${cross.p99ms} against ${same.p99ms} ms), ${cross.dispatched} of ${cross.sent} dispatched` };
}

/** The issue-15 line: cross − same p99 against its target, or why the same-node baseline cannot judge it. */
function crossVerdict(r: CrossNodeResult): string {
  const [same, cross] = r.figures;
  const head = `Target (issue 15): at ${same.rate}/s, cross-node p99 ≤ same-node p99 + ${TARGET_OVER_SAME_MS} ms. Same node ${same.p99ms} ms (baseline), cross node ${cross.p99ms} ms: cross − same = ${r.deltaP99} ms (${r.ratioP99}×)`;
  if (sameSaturated(same)) return `${head}; the same-node baseline is saturated (p99 ${same.p99ms} ms, ${same.sent - same.dispatched} of ${same.sent} not dispatched): measures the machine, not the hub.`;
  return `${head}: ${crossMissed(r) ? 'NOT met' : 'met'}.`;
}

function writeResults(r: CrossNodeResult, rate: number): void {
  const lines = ['', `## Cross-node dispatch (bench/cross-node.ts) — ${new Date().toISOString()}`, ''];
  if (r.skipped) {
    lines.push(`Skipped: ${r.skipped}.`, '');
  } else {
    lines.push(
      `Routing hop alone: a run.start-sized MessagePack frame published on a node's topic (\`hostframes:<node>\`) at ${rate}/s for ${r.seconds} s, latency publish → delivery to the subscriber.`,
      '',
      '| target | rate/s | sent | delivered | lost | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...r.hop.map((f) => `| ${f.target} | ${f.rate} | ${f.sent} | ${f.dispatched} | ${f.errors} | ${f.p50ms} | ${f.p99ms} | ${f.maxms} |`),
      '',
      `Two hub nodes, each in a process of its own, on one PostgreSQL database and one Redis; client and host in the bench process (${HOSTS} hosts: in-process protocol clients, capacity ${HOST_CAPACITY} each, connected to node A, ending each run at once; one host's row lock is taken by each of its accepts and run ends, so the load is spread as in bench/dispatch.ts); ${SESSIONS} sessions; messages sent open-loop at ${rate}/s for ${r.seconds} s; latency = client send → host receives run.start. Redis figures: commands processed (a script's inner commands included) and Redis CPU over the phase, per message sent, both nodes and the hosts' heartbeats included. CPU: utime + stime of each node's process (/proc) and of this process (client and hosts) per message sent; event-loop delay: each process's own 1 ms monitor over the phase.`,
      '',
      '| target | rate/s | sent | dispatched | errors | p50 ms | p99 ms | max ms | Redis commands / msg | Redis CPU µs / msg | CPU ms/msg node A / node B / bench process | event-loop delay p99 / max ms, node A; node B; bench process |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
      ...r.figures.map((f) => `| ${f.target} | ${f.rate} | ${f.sent} | ${f.dispatched} | ${f.errors} | ${f.p50ms} | ${f.p99ms} | ${f.maxms} | ${f.redisCommandsPerMsg} | ${f.redisCpuUsPerMsg} | ${f.cpuMsPerMsg ? `${f.cpuMsPerMsg.a} / ${f.cpuMsPerMsg.b} / ${f.cpuMsPerMsg.bench}` : ''} | ${f.loopP99 && f.loopMax ? `${f.loopP99.a} / ${f.loopMax.a}; ${f.loopP99.b} / ${f.loopMax.b}; ${f.loopP99.bench} / ${f.loopMax.bench}` : ''} |`),
      '',
      `At ${rate}/s, ${r.rounds?.length ?? 1} round(s), same node first in odd rounds and cross node first in even ones; the rows above are the round with the median cross − same (BENCH_ROUNDS). Every round's same / cross p99: ${(r.rounds ?? []).map((x, k) => `${k + 1}: ${x.same.p99ms} / ${x.cross.p99ms} ms (${r2(x.cross.p99ms - x.same.p99ms)} ms)`).join('; ')}.`,
      '',
      `Cross-node hop p99 ${r.hop[1].p99ms} ms (target ≤ ${TARGET_P99_MS} ms: ${r.hop[1].p99ms <= TARGET_P99_MS ? 'met' : 'NOT met'}). End to end at ${rate}/s, cross-node p99 ${r.figures[1].p99ms} ms vs same-node ${r.figures[0].p99ms} ms (ratio ${r.ratioP99}; the first round's absolute target ≤ ${TARGET_P99_MS} ms: ${r.figures[1].p99ms <= TARGET_P99_MS ? 'met' : 'NOT met'}; issue 15's target, relative to the same node, is the line below); at ${r.figures[2].rate}/s, cross-node p99 ${r.figures[3].p99ms} ms vs same-node ${r.figures[2].p99ms} ms. "errors" counts messages refused or skipped because the session's previous message was not yet dispatched (the node is saturated).`,
      '',
      `Redis commands per message (largest; a script's inner commands count): ${r.figures.slice(0, 2).map((f) => `${f.target.split(':')[0]} — ${f.redisTop}`).join('; ')}.`,
      '',
      crossVerdict(r),
      ...(r.profile ? [r.profile] : []),
      '',
    );
  }
  appendFileSync(new URL('./RESULTS.md', import.meta.url), lines.join('\n'));
}

runIfMain(import.meta.url, async () => {
  const r = await run({ write: recording() });
  if (r.skipped) console.log(`skipped: ${r.skipped}`);
  else for (const [k, x] of (r.rounds ?? []).entries()) console.log(`round ${k + 1}: same p99 ${x.same.p99ms} ms, cross p99 ${x.cross.p99ms} ms`);
  if (!r.skipped) for (const f of r.figures) console.log(JSON.stringify({ target: f.target, rate: f.rate, p50: f.p50ms, p99: f.p99ms, max: f.maxms, errors: f.errors, cpu: f.cpuMsPerMsg, loop: f.loopP99, loopMax: f.loopMax, stages: f.stages, dbCalls: f.dbCalls }));
});
