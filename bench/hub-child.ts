// A bench hub in a process of its own (started by bench/hub-process.ts), so
// the load generators (HTTP client, simulated hosts, SSE readers) and other
// nodes do not share its event loop. Configured by BENCH_HUB_CONFIG (JSON
// config overrides: a shared database, Redis, node id, admin key) and
// BENCH_HUB_USER=0 (no bench user: another node made it). Talks to the
// parent over the IPC channel:
//   → {t: 'ready', url, key, adminKey}   once the hub listens (and the bench user exists)
//   ← {t: 'open', id}             → {t: 'open', id, n}: tasks queued or running
//   ← {t: 'loop-reset'}           starts an event-loop delay window (bench/loop-window.ts)
//   ← {t: 'loop-read'}            → {t: 'loop', loop: {p99, max}} (ms) since the reset; ends the window
//   ← {t: 'stats'}                → {t: 'stats', rss, heap, heapCommitted, newSpace, streams, sseBuffered}: RSS, heap+external,
//                                   V8's committed heap and its young generation (bytes, after a GC under --expose-gc), SSE accounting
//   ← {t: 'seed', n, known?}      → {t: 'seeded', credentials}: n hosts of the bench user inserted straight into the database
//                                  (known: as hosts that said their hello before, see bench/hosts.ts)
//   ← {t: 'snapshot', path}      → {t: 'snapshotted', path}: a heap snapshot written there (after a GC under --expose-gc);
//                                  bench/heap-diff.ts compares two by constructor
//   ← {t: 'cpu-start'}           → {t: 'cpu-started'}: the main thread's CPU profile starts (bench/miss-profile.ts)
//   ← {t: 'cpu-stop'}            → {t: 'cpu-profile', profile}: it stops; the V8 profile
//   ← {t: 'close'}                closes the hub and exits
// BENCH_HUB_PROMISES=file.json: promises the hub created from {t: 'profile'} to close, and where one in 64 was made.
// BENCH_HUB_QUERIES=file.json: the hub's SQL statements counted by their text (values aside) from
// {t: 'profile'} (setup done) to close, most frequent first.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { executionAsyncId, createHook } from 'node:async_hooks';
import { startTestHub } from '../test/helpers/hub.js';
import { seedHosts } from './hosts.js';
import { loopWindow } from './loop-window.js';
import { inProcessProfiler } from './miss-profile.js';

// BENCH_ALS_OFF=1, measurement only: AsyncLocalStorage.run without Node 20's promise hooks, which
// the hub turns on only while one of MikroORM's contexts is open (src/db/async-context.ts; before
// that, from its first flush or transaction for good). Stores then do not follow async
// continuations, so MikroORM's nested-flush and transaction contexts are lost; the message path
// (raw SQL) does not use them. Shows what the hooks still cost a message.
if (process.env.BENCH_ALS_OFF) {
  const P = (await import('node:async_hooks')).AsyncLocalStorage.prototype as any;
  P._enable = function (this: any) { this.enabled = true; };
}
const config = JSON.parse(process.env.BENCH_HUB_CONFIG ?? '{}');
const t = await startTestHub({ logLevel: 'warn', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, ...config });
const u = process.env.BENCH_HUB_USER === '0' ? undefined : await t.user('bench');
const conn = t.hub.ctx.em().getConnection();
// BENCH_HUB_SQL=file.sql: run on the hub's database once it is migrated, for an A/B of a schema or
// function change over the whole message path (bench/sql-calls.ts's SQL_AB measures the two calls alone).
if (process.env.BENCH_HUB_SQL) await conn.execute(readFileSync(process.env.BENCH_HUB_SQL, 'utf8'));
// Whether Node's promise hooks are on (a promise reaction then runs with an async id; 0 without hooks).
const probeHooks = () => new Promise<number>((res) => setImmediate(() => void Promise.resolve().then(() => res(executionAsyncId()))));
if (process.env.BENCH_ALS_OFF || process.env.BENCH_HUB_PROMISES) console.error(`bench hub: promise hooks ${(await probeHooks()) === 0 ? 'off' : 'on'}`);

const loop = loopWindow();
/** A missed target's profiled round (bench/miss-profile.ts), apart from BENCH_HUB_PROFILE's whole-run profile. */
const missProfiler = inProcessProfiler();
let promises = 0;
const promiseSites = new Map<string, number>();
const gc = (globalThis as { gc?: () => void }).gc;
/** One young-generation collection, with or without --expose-gc. */
const minorGc = () => {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as (o: { type: 'minor' }) => void)({ type: 'minor' });
};
/** Statement text → [calls, characters sent: the text and its bound values]. */
const queries = new Map<string, [number, number]>();
const countQuery = (q: { sql: string; bindings?: unknown[] }) => {
  // Values quoted into the text (MikroORM's execute) count as placeholders too, so one statement is one line.
  const k = q.sql.replace(/\s+/g, ' ').replace(/'(?:[^']|'')*'/g, '?').replace(/\((?:\$\d+|\?)(?:, (?:\$\d+|\?))*\)/g, '(…)').slice(0, 120);
  let chars = q.sql.length;
  for (const b of q.bindings ?? []) chars += typeof b === 'string' ? b.length : String(b).length;
  const c = queries.get(k) ?? [0, 0];
  c[0]++;
  c[1] += chars;
  queries.set(k, c);
};
process.on('message', async (m: { t: string; id?: number; n?: number; known?: boolean; path?: string }) => {
  if (loop(m)) return; // an event-loop delay window (bench/loop-window.ts)
  if (m.t === 'profile' && process.env.BENCH_HUB_QUERIES) {
    // Every statement is a node-postgres Client's query, whether knex ran it or not (src/db/direct.ts).
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...a: any[]) {
      countQuery(typeof a[0] === 'string' ? { sql: a[0], bindings: Array.isArray(a[1]) ? a[1] : undefined } : { sql: a[0]?.text ?? '', bindings: a[0]?.values });
      return (query as any).apply(this, a);
    } as typeof query;
  }
  if (m.t === 'profile' && process.env.BENCH_HUB_PROMISES) {
    // Promises created from here to close, and where one in 64 was made (its nearest frames in src/).
    createHook({
      init(_id, type) {
        if (type !== 'PROMISE') return;
        if (promises++ % 64 !== 0) return;
        const at = (new Error().stack ?? '').split('\n').filter((l) => l.includes('/src/')).slice(0, 2).map((l) => l.trim().replace(/^at /, '').replace(/\(.*\/src\//, '(')).join(' < ');
        promiseSites.set(at, (promiseSites.get(at) ?? 0) + 64);
      },
    }).enable();
  }
  // BENCH_HUB_SNAPSHOT=file.heapsnapshot: one heap snapshot BENCH_HUB_SNAPSHOT_MS (3000) after {t: 'profile'},
  // under load (what is live then, with its retainers: bench/heap-retainers.ts).
  if (m.t === 'profile' && process.env.BENCH_HUB_SNAPSHOT) {
    const path = process.env.BENCH_HUB_SNAPSHOT.replace('%n', config.nodeId ?? 'hub');
    setTimeout(() => console.error(`bench hub: heap snapshot ${writeHeapSnapshot(path)}`), Number(process.env.BENCH_HUB_SNAPSHOT_MS ?? 3000));
  }
  if (m.t === 'profile' && prof) {
    prof.connect();
    if (process.env.BENCH_HUB_PROFILE) {
      await prof.post('Profiler.enable');
      await prof.post('Profiler.start');
    }
    // Every allocation sampled, also what the next young-generation collection frees (what costs GC time);
    // BENCH_HUB_HEAP_PROMOTED=1: only what survived the young generation (what fills the old one and brings its major collections).
    if (process.env.BENCH_HUB_HEAP) {
      const promoted = process.env.BENCH_HUB_HEAP_PROMOTED === '1';
      await prof.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !promoted });
    }
  } else if (m.t === 'cpu-start') {
    await missProfiler.start();
    process.send!({ t: 'cpu-started' });
  } else if (m.t === 'cpu-stop') {
    process.send!({ t: 'cpu-profile', profile: await missProfiler.stop() });
  } else if (m.t === 'seed') {
    process.send!({ t: 'seeded', credentials: await seedHosts(conn, u!.id, m.n ?? 0, m.known) });
  } else if (m.t === 'stats') {
    gc?.();
    const mem = process.memoryUsage();
    // The young generation's committed size, apart: it grows under allocation bursts, whatever the channels.
    const newSpace = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.physical_space_size ?? 0;
    process.send!({ t: 'stats', rss: mem.rss, heap: mem.heapUsed + mem.external, heapCommitted: mem.heapTotal, newSpace, streams: t.hub.sse.streams(), sseBuffered: t.hub.sse.bufferedBytes() });
  } else if (m.t === 'snapshot') {
    gc?.();
    process.send!({ t: 'snapshotted', path: writeHeapSnapshot(m.path) });
  } else if (m.t === 'open') {
    const r = await conn.execute(`select count(*) as c from session_tasks where status in ('queued', 'running')`);
    process.send!({ t: 'open', id: m.id, n: Number(r[0].c) });
  } else if (m.t === 'close') {
    if (process.env.BENCH_HUB_QUERIES) writeFileSync(process.env.BENCH_HUB_QUERIES.replace('%n', config.nodeId ?? 'hub'), JSON.stringify([...queries].sort((a, b) => b[1][0] - a[1][0]).map(([k, [n, chars]]) => [k, n, chars]), null, 1));
    if (process.env.BENCH_HUB_PROMISES) writeFileSync(process.env.BENCH_HUB_PROMISES.replace('%n', config.nodeId ?? 'hub'), JSON.stringify({ promises, sites: [...promiseSites].sort((a, b) => b[1] - a[1]) }, null, 1));
    if (prof && process.env.BENCH_HUB_PROFILE) writeFileSync(process.env.BENCH_HUB_PROFILE.replace('%n', config.nodeId ?? 'hub'), JSON.stringify((await prof.post('Profiler.stop')).profile));
    // What the young generation still holds at the end was never judged: one minor collection first, so
    // the promoted profile keeps only what outlived it (the load has stopped; little is in flight).
    if (prof && process.env.BENCH_HUB_HEAP_PROMOTED === '1') minorGc();
    if (prof && process.env.BENCH_HUB_HEAP) writeFileSync(process.env.BENCH_HUB_HEAP.replace('%n', config.nodeId ?? 'hub'), JSON.stringify((await prof.post('HeapProfiler.stopSampling')).profile));
    await t.close().catch(() => undefined);
    process.exit(0);
  }
});
process.on('disconnect', () => void t.close().finally(() => process.exit(0))); // the bench died: do not linger
// BENCH_HUB_PROFILE=file.cpuprofile: a CPU profile of the hub from {t: 'profile'} (setup done) to close;
// BENCH_HUB_HEAP=file.heapprofile: the same window's allocations, sampled every 4 KiB (bench/heap-summary.ts).
// BENCH_HUB_HEAP_PROMOTED=1 with it: only the allocations that outlived the young generation (what fills the old one).
// `%n` in the name is replaced by the node id. (Node's --cpu-prof, which profiles from the start,
// breaks uWS's WebSocket upgrades here: connections close with 1006 before the welcome.)
const prof = process.env.BENCH_HUB_PROFILE || process.env.BENCH_HUB_HEAP ? new Session() : undefined;
process.send!({ t: 'ready', url: t.url, key: u?.key, adminKey: t.adminKey });
