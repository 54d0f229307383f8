// What a batched write of hosts' reports costs per row, in the two shapes a
// batch statement can take: a VALUES list (a bind parameter per value, the
// statement's text growing with the batch) and one array parameter per column
// (`unnest(?::text[], …)`, a constant text), as src/hosts/store.ts writes them
// now. The hello (7 columns) at a connect storm's batch (25) and at the
// statement's bound (2,000), the last-seen time (2 columns) at its bound
// (5,000). CPU per row of this process (node-postgres building the statement)
// and of the PostgreSQL backend (/proc, so PostgreSQL on this machine), rounds
// alternating. Needs DATABASE_URL; prints its table.
//
//   DATABASE_URL=… npx tsx bench/batch-writes.ts      (BATCH_ROUNDS=3)
import { processCpuMs } from './proc-cpu.js';
import pg from 'pg';
import { positional } from '../src/db/direct.js';
import { createTestDatabase } from '../test/helpers/hub.js';

const ROUNDS = Number(process.env.BATCH_ROUNDS ?? 3);
const ALL = 5000;
const ENGINES = JSON.stringify([{ id: 'claude-code', displayName: 'Claude Code', version: '1.0.0' }]);

const HELLO_SET = `set name = v.name, cli_version = v.cli, protocol_version = v.pv, engines = v.engines, capacity = v.cap, updated_at = now(),
  last_seen_at = coalesce(v.t, h.last_seen_at)`;

/** The statement and its values for `ids`, in each shape. */
const shapes = {
  'hello, VALUES list': (ids: string[]) => {
    const now = new Date().toISOString();
    const values = ids.flatMap((id) => [id, 'host', '1.2.3', 1, ENGINES, 5, now]);
    const rows = ids.map(() => '(?, ?, ?, ?::int, ?::jsonb, ?::int, ?::timestamptz)').join(',');
    return [positional(`update bench_hosts h ${HELLO_SET} from (values ${rows}) as v(id, name, cli, pv, engines, cap, t) where h.id = v.id`, values.length), values] as const;
  },
  'hello, arrays': (ids: string[]) => {
    const now = new Date().toISOString();
    return [positional(`update bench_hosts h ${HELLO_SET}
      from unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::jsonb[], ?::int[], ?::timestamptz[]) as v(id, name, cli, pv, engines, cap, t) where h.id = v.id`, 7),
    [ids, ids.map(() => 'host'), ids.map(() => '1.2.3'), ids.map(() => 1), ids.map(() => ENGINES), ids.map(() => 5), ids.map(() => now)]] as const;
  },
  'last seen, VALUES list': (ids: string[]) => {
    const now = new Date().toISOString();
    const values = ids.flatMap((id) => [id, now]);
    return [positional(`update bench_hosts h set last_seen_at = v.t from (values ${ids.map(() => '(?, ?::timestamptz)').join(',')}) as v(id, t) where h.id = v.id`, values.length), values] as const;
  },
  'last seen, arrays': (ids: string[]) => {
    const now = new Date().toISOString();
    return [positional(`update bench_hosts h set last_seen_at = v.t from unnest(?::text[], ?::timestamptz[]) as v(id, t) where h.id = v.id`, 2), [ids, ids.map(() => now)]] as const;
  },
};
const CASES: Array<[keyof typeof shapes, number]> = [
  ['hello, VALUES list', 25], ['hello, arrays', 25], ['hello, VALUES list', 2000], ['hello, arrays', 2000],
  ['last seen, VALUES list', 5000], ['last seen, arrays', 5000],
];

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) return void console.log('DATABASE_URL is not set (the backend\'s CPU is read from /proc)');
  const db = await createTestDatabase();
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query(`create table bench_hosts (id text primary key, name text, cli_version text, protocol_version int, engines jsonb, capacity int,
                   updated_at timestamptz, last_seen_at timestamptz)`);
    const ids = Array.from({ length: ALL }, (_, i) => `hst_${i.toString(16).padStart(16, '0')}`);
    await c.query(`insert into bench_hosts (id) select unnest($1::text[])`, [ids]);
    const pid = (await c.query('select pg_backend_pid() as p')).rows[0].p as number;
    const backendMs = () => processCpuMs(pid) ?? NaN;
    const out = new Map<string, string[]>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const [shape, n] of CASES) {
        const reps = Math.max(10, Math.round(20_000 / n));
        const run = async (i: number) => {
          const at = (i * n) % (ALL - n + 1);
          const [sql, values] = shapes[shape](ids.slice(at, at + n));
          await c.query(sql, values as unknown[]);
        };
        for (let i = 0; i < 3; i++) await run(i); // warm
        const u0 = process.cpuUsage(), b0 = backendMs();
        for (let i = 0; i < reps; i++) await run(i);
        const u = process.cpuUsage(u0), b = backendMs() - b0;
        const k = `${shape} × ${n}`;
        (out.get(k) ?? out.set(k, []).get(k)!).push(`${((u.user + u.system) / reps / n).toFixed(1)} / ${((b * 1000) / reps / n).toFixed(1)}`);
      }
    }
    console.log(`| statement × rows | µs per row, this process / PostgreSQL (${ROUNDS} rounds) |\n|---|---|`);
    for (const [k, v] of out) console.log(`| ${k} | ${v.join(', ')} |`);
  } finally {
    await c.end();
    await db.drop();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
