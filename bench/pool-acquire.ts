// What taking a pooled connection for every call costs the hub's process, against the connections
// src/db/direct.ts keeps between calls: the same small statement, called one after another, by
// node-postgres on a connection acquired from knex's pool and released after each call (what
// `direct` did before it kept connections), or by `direct` itself. The two ways alternate in one
// process, in windows of N calls; then the same again with an AsyncLocalStorage enabled, as
// MikroORM leaves one after its first transaction or flush (on Node 20 every promise then pays
// async hooks, and an acquire makes about 27 promises). CPU is this process's utime + stime per
// call, the median of the windows; wall time per call likewise.
//
//   DATABASE_URL=… npx tsx bench/pool-acquire.ts      (POOL_N=5000 calls per window, POOL_WINDOWS=5)
import { AsyncLocalStorage } from 'node:async_hooks';
import { cpus, loadavg } from 'node:os';
import { runIfMain } from './main.js';
import { createTestDatabase } from '../test/helpers/hub.js';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';
import { direct, positional } from '../src/db/direct.js';

const N = Number(process.env.POOL_N ?? 5000);
const WINDOWS = Number(process.env.POOL_WINDOWS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r1 = (x: number) => Math.round(x * 10) / 10;

interface Conn { query(text: string, values: unknown[]): Promise<unknown> }

export async function run(): Promise<string> {
  const made = await createTestDatabase();
  if (!made.url) throw new Error('bench/pool-acquire.ts needs DATABASE_URL (the embedded database has a pool of one, never kept)');
  const db = await openDatabase({ databaseUrl: made.url, dataDir: ':memory:', dbPoolSize: 9 }, createLogger('silent'));
  const knex = db.orm.em.getConnection().getKnex();
  const client = knex.client as unknown as { acquireConnection(): Promise<Conn>; releaseConnection(c: Conn): Promise<unknown> };
  const ways: Record<string, (i: number) => Promise<unknown>> = {
    'acquire per call': async (i) => {
      const text = positional('select ?::int as x', 1); // as direct() numbers its placeholders
      const c = await client.acquireConnection();
      try {
        return await c.query(text, [i]);
      } finally {
        void client.releaseConnection(c);
      }
    },
    'kept (direct)': (i) => direct(knex, 'select ?::int as x', [i]),
  };
  const lines: string[] = [];
  const als = new AsyncLocalStorage<number>();
  try {
    for (const alsOn of [false, true]) {
      if (alsOn) als.run(1, () => undefined); // enabled from here on, as after MikroORM's first run
      const cpu: Record<string, number[]> = {};
      const wall: Record<string, number[]> = {};
      for (const name of Object.keys(ways)) for (let i = 0; i < 200; i++) await ways[name](i); // warm
      for (let w = 0; w < WINDOWS; w++) {
        for (const name of w % 2 ? Object.keys(ways).reverse() : Object.keys(ways)) {
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          for (let i = 0; i < N; i++) await ways[name](i);
          const c = process.cpuUsage(c0);
          (wall[name] ??= []).push(((performance.now() - t0) * 1000) / N);
          (cpu[name] ??= []).push((c.user + c.system) / N);
        }
      }
      const [a, k] = Object.keys(ways);
      lines.push(`| ${alsOn ? 'on' : 'off'} | ${r1(median(cpu[a]))} / ${r1(median(wall[a]))} | ${r1(median(cpu[k]))} / ${r1(median(wall[k]))} | ${r1(median(cpu[a]) - median(cpu[k]))} µs |`);
    }
  } finally {
    als.disable();
    await db.close();
    await made.drop();
  }
  return [
    `Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end. ${N} calls per window, ${WINDOWS} windows per way, alternating; µs per call, medians.\n`,
    '| AsyncLocalStorage enabled | acquire per call, CPU / wall | kept (direct), CPU / wall | CPU saved per call |',
    '|---|---:|---:|---:|',
    ...lines,
  ].join('\n');
}

runIfMain(import.meta.url, () => run().then((o) => console.log(o)));
