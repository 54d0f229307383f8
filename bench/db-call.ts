// What one SQL call with bind values costs the hub's own process, by the two
// ways the hub has made it: knex's raw (the runner MikroORM uses) and
// node-postgres directly on a connection of the same pool (src/db/direct.ts).
// Both alternate in one process on one pool, in windows of N calls, cold (the
// first window, as in a connect storm whose few calls never warm knex up) and
// warm (the median of the later windows); CPU is this process's utime+stime
// per call, so the database's own work is not in it. The statement is the
// shape of the host channel's batched writes: a VALUES list of R rows of
// three values each.
//
//   npx tsx bench/db-call.ts      (appends its section to bench/RESULTS.md; DB_CALL_N=2000 calls per window,
//                                  DB_CALL_ROWS=4,20,200, DB_CALL_WINDOWS=5; DATABASE_URL, else the embedded database)
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { runIfMain, recording } from './main.js';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';
import { direct } from '../src/db/direct.js';
import { createTestDatabase } from '../test/helpers/hub.js';

const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const N = Number(process.env.DB_CALL_N ?? 2000);
const ROWS = (process.env.DB_CALL_ROWS ?? '4,20,200').split(',').map(Number);
const WINDOWS = Number(process.env.DB_CALL_WINDOWS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r1 = (x: number) => Math.round(x * 10) / 10;

export async function run(opts: { write?: boolean } = {}): Promise<string> {
  const made = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: made.url, dataDir: ':memory:', dbPoolSize: 2 }, createLogger('silent'));
  const knex = db.orm.em.getConnection().getKnex();
  const lines: string[] = [];
  try {
    for (const rows of ROWS) {
      const sql = `select v.a, v.b from (values ${Array.from({ length: rows }, () => '(?::text, ?::int, ?::jsonb)').join(', ')}) as v(a, b, c) where v.b >= ?`;
      const params: unknown[] = [];
      for (let i = 0; i < rows; i++) params.push(`host_${i}`, i, JSON.stringify([{ id: 'claude-code', displayName: 'Claude Code', version: '2.0.1' }]));
      params.push(0);
      const ways = {
        'knex raw': async () => ((await knex.raw(sql, params as never[])) as { rows: unknown[] }).rows,
        direct: () => direct(knex, sql, params),
      };
      const cpu: Record<string, number[]> = { 'knex raw': [], direct: [] };
      for (let w = 0; w < WINDOWS; w++) {
        // Alternating order: each way goes first in every other window.
        for (const name of (w % 2 ? ['direct', 'knex raw'] : ['knex raw', 'direct']) as Array<keyof typeof ways>) {
          const c0 = process.cpuUsage();
          for (let i = 0; i < N; i++) await ways[name]();
          const c = process.cpuUsage(c0);
          cpu[name].push((c.user + c.system) / N);
        }
      }
      const row = (name: string) => [cpu[name][0], median(cpu[name].slice(1))];
      const [kc, kw] = row('knex raw');
      const [dc, dw] = row('direct');
      lines.push(`| ${rows} rows, ${params.length} values | ${r1(kc)} / ${r1(kw)} | ${r1(dc)} / ${r1(dw)} | ${r1(kw - dw)} µs (${Math.round((100 * (kw - dw)) / kw)} %) |`);
    }
  } finally {
    await db.close();
    await made.drop();
  }
  const out = [
    `\n## One SQL call's cost to the hub's process (bench/db-call.ts) — ${new Date().toISOString()}\n`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end; database ${made.url ? 'PostgreSQL' : 'embedded PGlite'}. ${N} calls per window, ${WINDOWS} windows, the two ways alternating; CPU = this process's utime + stime per call (µs), the first window (cold) / the median of the others (warm).\n`,
    '| statement | knex raw, cold / warm | node-postgres direct, cold / warm | saved per call, warm |',
    '|---|---:|---:|---:|',
    ...lines,
    '',
  ].join('\n');
  if (opts.write) appendFileSync(RESULTS, out);
  return out;
}

runIfMain(import.meta.url, () => run({ write: recording() }).then((o) => console.log(o)));
