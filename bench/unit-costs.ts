// Unit costs for the capacity model (docs/capacity.md): what one message,
// one delta, one host heartbeat and one connected host cost the hub, Redis and
// PostgreSQL, measured as resource counters before/after a window of traffic
// minus the same counters' idle rate:
//  - hub CPU: utime+stime of the hub's child process (/proc/<pid>/stat);
//  - PostgreSQL: utime+stime of the backends serving the hub's database,
//    pg_stat_database commits and rows of that database, and its WAL bytes
//    (pg_walinspect records touching that database, and their commits);
//  - Redis: INFO commandstats calls (scripts' inner commands included),
//    used_cpu_user+sys, used_memory. A private redis-server is started for the
//    run, since the shared one's counters carry other processes' traffic
//    (BENCH_REDIS=shared uses REDIS_URL under a prefix of its own instead);
//  - hub RSS and file descriptors per host channel, at a few thousand.
// Each figure is the median of 3 repetitions. Needs DATABASE_URL.
//
//   npx tsx bench/unit-costs.ts      (UNIT_QUICK=1 for a short try; UNIT_HOSTS=3000, UNIT_HB_SECONDS=60, UNIT_MSG_RATE=100, UNIT_DELTA_RATE=2000)
import { execSync } from 'node:child_process';
import { appendFileSync, readdirSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { runIfMain, recording } from './main.js';
import { privateRedis } from './private-redis.js';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createTestDatabase } from '../test/helpers/hub.js';
import { connectFakeHost, type FakeHost } from '../test/helpers/host.js';
import { forkHub, type BenchHub } from './hub-process.js';
import { LoadClient } from './load-client.js';
import { setup, onRunStart, type Sim } from './dispatch.js';
import { machineCpuTimes, processCpuMs } from './proc-cpu.js';

const REPS = 3;
/** UNIT_QUICK=1: short windows, to try the bench out (figures not meant to be kept). */
const QUICK = process.env.UNIT_QUICK === '1';
const IDLE_SECONDS = QUICK ? 3 : 15;
const TRAFFIC_SECONDS = QUICK ? 2 : 10;
/** PostgreSQL backends report their counters to pg_stat_database up to ~10 s after going idle. */
const SETTLE_SECONDS = QUICK ? 2 : 11;
const HOSTS = Number(process.env.UNIT_HOSTS ?? 3000);
const HB_SECONDS = Number(process.env.UNIT_HB_SECONDS ?? 60);
const MSG_RATE = Number(process.env.UNIT_MSG_RATE ?? 100);
const DELTA_RATE = Number(process.env.UNIT_DELTA_RATE ?? 2000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sh = (cmd: string) => {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
};
const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

/** CPU seconds (user+sys, all threads) of a process, or undefined when it is gone. */
function cpuSeconds(pid: number): number | undefined {
  const ms = processCpuMs(pid);
  return ms === undefined ? undefined : ms / 1000;
}

// ---------------------------------------------------------------- counters

interface Snap {
  at: number;
  hubCpu: number;
  pgCpu: Map<number, number>;
  commits: number;
  rows: number;
  lsn: string;
  redisCalls: Map<string, number>;
  redisCpu: number;
  redisMem: number;
}

/** One window's deltas, each also per second. */
interface Delta {
  seconds: number;
  hubCpu: number;
  pgCpu: number;
  commits: number;
  rows: number;
  walBytes: number;
  redisCalls: number;
  redisCpu: number;
  byCommand: Map<string, number>;
}

class Counters {
  private constructor(
    private readonly hubPid: number,
    private readonly mon: pg.Client,
    private readonly inDb: pg.Client,
    private readonly dbName: string,
    private readonly dbOid: number,
    readonly redis: Redis,
  ) {}

  static async open(hubPid: number, baseUrl: string, dbUrl: string, redisUrl: string): Promise<Counters> {
    const mon = new pg.Client({ connectionString: baseUrl });
    await mon.connect();
    const inDb = new pg.Client({ connectionString: dbUrl });
    await inDb.connect();
    await inDb.query('create extension if not exists pg_walinspect');
    const dbName = new URL(dbUrl).pathname.slice(1);
    const oid = Number((await mon.query('select oid from pg_database where datname = $1', [dbName])).rows[0].oid);
    return new Counters(hubPid, mon, inDb, dbName, oid, new Redis(redisUrl));
  }

  async snap(): Promise<Snap> {
    const own = (this.inDb as unknown as { processID: number }).processID;
    const pids = (await this.mon.query('select pid from pg_stat_activity where datname = $1 and pid <> $2', [this.dbName, own])).rows.map((r) => Number(r.pid));
    const pgCpu = new Map<number, number>();
    for (const p of pids) {
      const c = cpuSeconds(p);
      if (c !== undefined) pgCpu.set(p, c);
    }
    const d = (await this.mon.query('select xact_commit, tup_inserted + tup_updated + tup_deleted as rows, pg_current_wal_flush_lsn() as lsn from pg_stat_database where datname = $1', [this.dbName])).rows[0];
    const info = await this.redis.info('all');
    const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
    const redisCalls = new Map<string, number>();
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (!['info', 'memory', 'scan'].includes(m[1])) redisCalls.set(m[1], Number(m[2]));
    return {
      at: performance.now(), hubCpu: cpuSeconds(this.hubPid) ?? NaN, pgCpu, commits: Number(d.xact_commit), rows: Number(d.rows), lsn: d.lsn,
      redisCalls, redisCpu: num('used_cpu_user') + num('used_cpu_sys'), redisMem: num('used_memory'),
    };
  }

  /** WAL bytes between two positions in records touching this database's relations, with their transactions' commit records. */
  private async walBytes(from: string, to: string): Promise<number> {
    try {
      const r = await this.inDb.query(
        `with r as (select * from pg_get_wal_records_info($1, $2)),
              mine as (select distinct xid from r where block_ref like $3 and xid <> '0')
         select coalesce(sum(record_length), 0) as b from r where block_ref like $3 or (resource_manager = 'Transaction' and xid in (select xid from mine))`,
        [from, to, `%/${this.dbOid}/%`],
      );
      return Number(r.rows[0].b);
    } catch {
      return NaN;
    }
  }

  async delta(a: Snap, b: Snap): Promise<Delta> {
    let pgCpu = 0;
    for (const [p, c] of b.pgCpu) pgCpu += c - (a.pgCpu.get(p) ?? 0);
    const byCommand = new Map<string, number>();
    for (const [k, v] of b.redisCalls) {
      const n = v - (a.redisCalls.get(k) ?? 0);
      if (n) byCommand.set(k, n);
    }
    return {
      seconds: (b.at - a.at) / 1000, hubCpu: b.hubCpu - a.hubCpu, pgCpu, commits: b.commits - a.commits, rows: b.rows - a.rows,
      walBytes: await this.walBytes(a.lsn, b.lsn), redisCalls: [...byCommand.values()].reduce((x, y) => x + y, 0), redisCpu: b.redisCpu - a.redisCpu, byCommand,
    };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.mon.end();
    await this.inDb.end();
  }
}

type Rates = Omit<Delta, 'seconds' | 'byCommand'>;
const KEYS: Array<keyof Rates> = ['hubCpu', 'pgCpu', 'commits', 'rows', 'walBytes', 'redisCalls', 'redisCpu'];

/** A window's deltas less what the idle hub spends in as long, divided by `units`. */
function perUnit(d: Delta, idle: Rates, units: number): Rates {
  const out = {} as Rates;
  for (const k of KEYS) out[k] = (d[k] - idle[k] * d.seconds) / units;
  return out;
}

function medianOf(xs: Rates[]): Rates {
  const out = {} as Rates;
  for (const k of KEYS) out[k] = median(xs.map((x) => x[k]));
  return out;
}

/** Redis commands per unit, largest first, e.g. "publish 2.0, evalsha 1.0". */
function topCommands(ds: Delta[], units: number[], idle: Map<string, number>): string {
  const names = new Set(ds.flatMap((d) => [...d.byCommand.keys()]));
  const per = [...names].map((n) => [n, median(ds.map((d, i) => ((d.byCommand.get(n) ?? 0) - (idle.get(n) ?? 0) * d.seconds) / units[i]))] as const);
  return per.filter(([, v]) => v >= 0.005).sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, v]) => `${n} ${fmt(v, 3)}`).join(', ');
}

// ---------------------------------------------------------------- traffic

/** An SSE reader of a session's events counting message.delta frames. */
function readDeltas(url: string, key: string, sessionId: string, count: { n: number }): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${url}/api/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      res.setEncoding('utf8');
      let tail = '';
      res.on('data', (chunk: string) => {
        const s = tail + chunk;
        for (let i = s.indexOf('message.delta'); i >= 0; i = s.indexOf('message.delta', i + 13)) count.n++;
        tail = s.slice(-12); // a name cut by the chunk boundary is counted with the next chunk (12 < its length: never twice)
      });
      res.on('error', () => undefined);
      resolve(() => req.destroy());
    });
    req.on('error', reject);
  });
}

export interface UnitCostsResult {
  skipped?: string;
  redis: string;
  idle: Rates;
  message: Rates;
  delta: Rates;
  heartbeat: Rates;
  /** Per connected host per minute (heartbeats, presence refresh, lastSeen persistence). */
  hostMinute: Rates;
  messageCommands: string;
  deltaCommands: string;
  hostCommands: string;
  heartbeatMs: number;
  hosts: number;
  rssKbPerChannel: number;
  /** JS heap + external growth per channel (after GC): less noisy than RSS. */
  heapKbPerChannel: number;
  fdsPerChannel: number;
  redisBytesPerHost: number;
  presenceKeyBytes: number;
  rssSteps: string[];
  counts: { messages: number[]; deltas: number[] };
  steal: string;
  load: { start: string; end: string };
  cpuModel: string;
  seconds: number;
}

export async function run(opts: { write?: boolean } = {}): Promise<UnitCostsResult | { skipped: string }> {
  if (!process.env.DATABASE_URL) {
    const skipped = 'DATABASE_URL is not set';
    if (opts.write) appendFileSync(new URL('./RESULTS.md', import.meta.url), `\n## Unit costs (bench/unit-costs.ts) — ${new Date().toISOString()}\n\nSkipped: ${skipped}.\n`);
    return { skipped };
  }
  const say = (m: string) => console.error(`unit-costs: ${m}`);
  const t0 = performance.now();
  const cpu0 = machineCpuTimes()!;
  const loadStart = loadavg().map((x) => x.toFixed(1)).join(' ');
  const redis = await privateRedis();
  const db = await createTestDatabase();
  const prefix = `unit${randomBytes(3).toString('hex')}:`;
  let hub: BenchHub | undefined;
  let c: Counters | undefined;
  const client = new LoadClient();
  const hosts: FakeHost[] = [];
  let sims: Sim[] = [];
  try {
    hub = await forkHub({ config: { databaseUrl: db.url, redisUrl: redis.url, redisPrefix: prefix, nodeId: 'unit' }, nodeArgs: ['--expose-gc'], name: 'unit' });
    const t = hub;
    c = await Counters.open(t.pid!, process.env.DATABASE_URL, db.url!, redis.url);
    const counters = c;
    sims = await setup(t, t.key);
    say('20 hosts, 100 sessions ready');
    let ending = true;
    let ended = 0;
    for (const s of sims) {
      onRunStart(s.host, (f) => {
        if (!ending) return;
        s.host.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 10, outputTokens: 5 } });
        ended++;
      });
    }
    const all = sims.flatMap((s) => s.sessions);
    const window = async (body: () => Promise<unknown>): Promise<Delta> => {
      const a = await counters.snap();
      await body();
      return counters.delta(a, await counters.snap());
    };
    const sendMessages = async (n: number) => {
      const start = performance.now();
      const target = ended + n;
      const inflight: Promise<unknown>[] = [];
      for (let i = 0; i < n; i++) {
        const wait = start + (i * 1000) / MSG_RATE - performance.now();
        if (wait > 1) await sleep(wait);
        inflight.push(client.post(`${t.url}/api/v1/sessions/${all[i % all.length]}/messages`, t.key, { content: `m${i} ${'x'.repeat(200)}` }).catch(() => undefined));
      }
      await Promise.all(inflight);
      for (let i = 0; i < 600 && ended < target; i++) await sleep(50);
    };
    await sendMessages(200); // warm-up: JIT, pools, plans
    await sleep(SETTLE_SECONDS * 1000);

    // ---------- idle: the hub with 20 hosts heartbeating, no traffic ----------
    const idleD: Delta[] = [];
    for (let i = 0; i < REPS; i++) idleD.push(await window(() => sleep(IDLE_SECONDS * 1000)));
    const idle = medianOf(idleD.map((d) => perUnit(d, zero(), d.seconds)));
    const idleCmd = new Map<string, number>();
    for (const n of new Set(idleD.flatMap((d) => [...d.byCommand.keys()]))) idleCmd.set(n, median(idleD.map((d) => (d.byCommand.get(n) ?? 0) / d.seconds)));
    say(`idle ${JSON.stringify(idle)}`);

    // ---------- host channels: RSS, fds and Redis memory per channel ----------
    const credentials = await t.seedHosts!(HOSTS);
    const steps = 3;
    const per = Math.floor(HOSTS / steps);
    const rssPer: number[] = [];
    const heapPer: number[] = [];
    const fdPer: number[] = [];
    const redisPer: number[] = [];
    const rssSteps: string[] = [];
    const fds = () => readdirSync(`/proc/${t.pid}/fd`).length;
    for (let s = 0; s < steps; s++) {
      await sleep(3000);
      const { rss: r0, heap: h0 } = await t.stats!();
      const f0 = fds();
      const m0 = (await counters.snap()).redisMem;
      let next = s * per;
      const end = (s + 1) * per;
      const worker = async () => {
        while (next < end) {
          const i = next++;
          hosts.push(await connectFakeHost(t, credentials[i], { localAddress: `127.0.0.${2 + (i % 8)}`, name: `h${i}` }));
        }
      };
      await Promise.all(Array.from({ length: 100 }, worker));
      await sleep(6000); // presence written, one sweep
      const { rss: r1, heap: h1 } = await t.stats!();
      const f1 = fds();
      const m1 = (await counters.snap()).redisMem;
      rssPer.push((r1 - r0) / 1024 / per);
      heapPer.push((h1 - h0) / 1024 / per);
      fdPer.push((f1 - f0) / per);
      redisPer.push((m1 - m0) / per);
      rssSteps.push(`${Math.round(r0 / 2 ** 20)} → ${Math.round(r1 / 2 ** 20)} MB at ${end} channels`);
      say(`channels ${end}: rss ${Math.round(r1 / 2 ** 20)} MB`);
    }
    const keys: string[] = [];
    for (let cur = '0', i = 0; i < 20 && keys.length < 50; i++) {
      const [nx, ks] = await counters.redis.scan(cur, 'MATCH', `${prefix}presence:*`, 'COUNT', 1000);
      keys.push(...ks);
      cur = nx;
      if (cur === '0') break;
    }
    const keyBytes = median(await Promise.all(keys.slice(0, 50).map(async (k) => Number(await counters.redis.memory('USAGE', k)))));
    const heartbeatMs = Number((hosts[0].frames.find((f) => f.t === 'welcome') as { heartbeatMs?: number } | undefined)?.heartbeatMs ?? 5000);

    // ---------- heartbeats: N idle channels ----------
    const n = hosts.length;
    const hbD: Delta[] = [];
    for (let i = 0; i < REPS; i++) {
      hbD.push(await window(() => sleep(HB_SECONDS * 1000)));
      say(`heartbeat rep ${i + 1}`);
    }
    const beats = (d: Delta) => (n * d.seconds * 1000) / heartbeatMs;
    const heartbeat = medianOf(hbD.map((d) => perUnit(d, idle, beats(d))));
    const hostMinute = medianOf(hbD.map((d) => perUnit(d, idle, (n * d.seconds) / 60)));

    // The N channels go: messages and deltas are measured beside the 20 hosts of the idle baseline.
    for (const h of hosts.splice(0)) h.ws.terminate();
    await sleep(6000);

    // ---------- messages: POST → run.start → run.end ----------
    const msgD: Delta[] = [];
    const msgN: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const before = ended;
      msgD.push(await window(async () => {
        await sendMessages(MSG_RATE * TRAFFIC_SECONDS);
        await sleep(SETTLE_SECONDS * 1000);
      }));
      msgN.push(ended - before);
      say(`messages rep ${i + 1}: ${ended - before} ended`);
    }
    const message = medianOf(msgD.map((d, i) => perUnit(d, idle, msgN[i])));

    // ---------- deltas: host run.delta → one SSE reader ----------
    ending = false;
    const live: Array<{ host: FakeHost; runId: string; sessionId: string }> = [];
    for (const s of sims) {
      const sessionId = s.sessions[0];
      const got = new Promise<string>((res) => onRunStart(s.host, (f) => f.sessionId === sessionId && res(f.runId)));
      await client.post(`${t.url}/api/v1/sessions/${sessionId}/messages`, t.key, { content: 'stream' });
      live.push({ host: s.host, runId: await got, sessionId });
    }
    const got = { n: 0 };
    const readers = await Promise.all(live.map((l) => readDeltas(t.url, t.key, l.sessionId, got)));
    await sleep(500);
    const delD: Delta[] = [];
    const delN: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const before = got.n;
      delD.push(await window(async () => {
        const total = DELTA_RATE * TRAFFIC_SECONDS;
        const start = performance.now();
        for (let sent = 0; sent < total; ) {
          const wait = start + (sent * 1000) / DELTA_RATE - performance.now();
          if (wait > 1) await sleep(wait);
          for (const l of live) l.host.send({ t: 'run.delta', runId: l.runId, text: `${'token '.repeat(4)}${sent}` });
          sent += live.length;
        }
        await sleep(SETTLE_SECONDS * 1000);
      }));
      delN.push(got.n - before);
      say(`deltas rep ${i + 1}: ${got.n - before} received`);
    }
    const delta = medianOf(delD.map((d, i) => perUnit(d, idle, delN[i])));
    for (const l of live) l.host.send({ t: 'run.end', runId: l.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    await sleep(1000);
    for (const stop of readers) stop();

    const result: UnitCostsResult = {
      redis: redis.where, idle, message, delta, heartbeat, hostMinute,
      messageCommands: topCommands(msgD, msgN, idleCmd), deltaCommands: topCommands(delD, delN, idleCmd), hostCommands: topCommands(hbD, hbD.map((d) => (n * d.seconds) / 60), idleCmd),
      heartbeatMs, hosts: n, rssKbPerChannel: median(rssPer), heapKbPerChannel: median(heapPer), fdsPerChannel: median(fdPer), redisBytesPerHost: median(redisPer), presenceKeyBytes: keyBytes, rssSteps,
      counts: { messages: msgN, deltas: delN },
      steal: stolen(cpu0, machineCpuTimes()!), load: { start: loadStart, end: loadavg().map((x) => x.toFixed(1)).join(' ') },
      cpuModel: sh(`lscpu | grep 'Model name' | sed 's/.*: *//'`), seconds: Math.round((performance.now() - t0) / 1000),
    };
    console.log(JSON.stringify(result));
    if (opts.write) record(result);
    return result;
  } finally {
    for (const h of hosts) h.ws.terminate();
    for (const s of sims) s.host.close();
    client.close();
    await c?.close().catch(() => undefined);
    await hub?.close();
    await db.drop().catch(() => undefined);
    redis.proc?.kill();
  }
}

function zero(): Rates {
  return { hubCpu: 0, pgCpu: 0, commits: 0, rows: 0, walBytes: 0, redisCalls: 0, redisCpu: 0 };
}

function stolen(a: { total: number; steal: number }, b: { total: number; steal: number }): string {
  return b.total > a.total ? `${(((b.steal - a.steal) / (b.total - a.total)) * 100).toFixed(1)} %` : 'n/a';
}

function fmt(x: number, digits = 2): string {
  if (!Number.isFinite(x)) return 'n/a';
  return Math.abs(x) >= 100 ? String(Math.round(x)) : x.toFixed(digits);
}
const us = (s: number) => fmt(s * 1e6, 1);

function record(r: UnitCostsResult): void {
  const row = (name: string, x: Rates) => `| ${name} | ${us(x.hubCpu)} | ${us(x.pgCpu)} | ${fmt(x.commits)} | ${fmt(x.rows)} | ${fmt(x.walBytes, 0)} | ${fmt(x.redisCalls)} | ${us(x.redisCpu)} |`;
  appendFileSync(new URL('./RESULTS.md', import.meta.url), [
    '',
    `## Unit costs (bench/unit-costs.ts) — ${new Date().toISOString()}`,
    '',
    `Machine: 2 cores (${r.cpuModel}); load average ${r.load.start} at the start, ${r.load.end} at the end (the run's own processes count in it); CPU stolen by the hypervisor over the run ${r.steal}. Node ${process.version}, PostgreSQL (DATABASE_URL, a database of the run's own), Redis: ${r.redis}. Hub in a child process; hosts, HTTP client and SSE readers in the bench process. ${r.seconds} s in all.`,
    '',
    `Method: counters read before and after each window, less the idle hub's rate over as long (idle = the hub with 20 heartbeating hosts and no traffic), divided by the units in the window; each figure is the median of ${REPS} windows. CPU is user+sys time from /proc/<pid>/stat (the hub process; the PostgreSQL backends serving the run's database, found in pg_stat_activity); rows = tup_inserted+updated+deleted and commits = xact_commit of that database in pg_stat_database; WAL = pg_walinspect records touching that database's relations plus their commit records; Redis calls = INFO commandstats (a script's inner commands count each), Redis CPU = used_cpu_user+sys. A message = POST /sessions/{id}/messages → host receives run.start → host sends run.end with usage (${MSG_RATE} msg/s, ${TRAFFIC_SECONDS} s per window, each window followed by ${SETTLE_SECONDS} s for PostgreSQL's statistics to arrive; ${r.counts.messages.join(', ')} messages). A delta = a host run.delta relayed to one SSE reader (20 turns, ${DELTA_RATE} deltas/s; ${r.counts.deltas.join(', ')} received). A heartbeat = ${r.hosts} idle host channels (ping every ${r.heartbeatMs} ms) for ${HB_SECONDS} s, CPU / (N × T / interval); it includes the hub's sweep and presence refresh, and per minute the batched lastSeen write. CPU time per unit is less sensitive to the machine's contention than latency, but not immune: a loaded core's caches are colder, and CLK_TCK (10 ms) granularity is small against windows of several CPU seconds.`,
    '',
    '| unit | hub CPU µs | PostgreSQL CPU µs | commits | rows written | WAL bytes | Redis commands | Redis CPU µs |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('message (end to end)', r.message),
    row('delta relayed to one SSE reader', r.delta),
    row('host heartbeat (one ping)', r.heartbeat),
    row('connected idle host, per minute', r.hostMinute),
    `| idle hub, per second (subtracted) | ${us(r.idle.hubCpu)} | ${us(r.idle.pgCpu)} | ${fmt(r.idle.commits)} | ${fmt(r.idle.rows)} | ${fmt(r.idle.walBytes, 0)} | ${fmt(r.idle.redisCalls)} | ${us(r.idle.redisCpu)} |`,
    '',
    `Redis commands per unit (largest): message — ${r.messageCommands || 'none'}; delta — ${r.deltaCommands || 'none'}; connected host per minute — ${r.hostCommands || 'none'}.`,
    '',
    `Per host channel (3 steps of ${Math.floor(r.hosts / 3)} channels, median): hub RSS ${fmt(r.rssKbPerChannel)} KB (after GC; ${r.rssSteps.join('; ')}), of which JS heap + external ${fmt(r.heapKbPerChannel)} KB, ${fmt(r.fdsPerChannel)} file descriptors, Redis used_memory ${fmt(r.redisBytesPerHost, 0)} bytes (the presence hash and its TTL); one presence key's MEMORY USAGE ${fmt(r.presenceKeyBytes, 0)} bytes. The hub's RSS moves by tens of MB as GC returns pages (a step can read negative): the heap figure is the steadier one, the RSS median an upper reading.`,
    '',
  ].join('\n'));
}

runIfMain(import.meta.url, () => run({ write: recording() }));
