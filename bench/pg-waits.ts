// Where one database's statements spend their wall time, by sampling: every
// few milliseconds pg_stat_activity lists its active backends with what each
// is waiting for (nothing: on a core or waiting for one; IO:WALSync or
// IO:WALWrite: its commit writing and flushing WAL; LWLock:WALWrite: waiting
// while another backend's flush runs, which may cover its commit too;
// Lock:*: a row or transaction lock, told apart by the table whose row is
// waited for and the hub function whose call holds it), grouped by the hub
// function the statement calls. The shares are of
// samples, so of wall time; the sampling connection's own load is small but
// not nothing, which is why bench/dispatch takes it only when asked
// (BENCH_PG_WAITS=1), and then in the baseline's phases too, so both run
// beside the same load; its own backend's CPU is left out of either's.
import pg from 'pg';

/** A wait event's kind, as the dispatch notes report it. */
function kindOf(type: string | null, event: string | null): string {
  if (!type) return 'CPU or run queue';
  if (type === 'IO' && (event === 'WALSync' || event === 'WALWrite')) return 'own WAL flush';
  if (type === 'LWLock' && (event === 'WALWrite' || event === 'WALInsert')) return "another's WAL flush";
  if (type === 'Lock') return 'row or transaction lock';
  return 'other';
}

const fnOf = (q: string) => /\b(hub_\w+)\s*\(/.exec(q)?.[1] ?? 'other statements';

/** A lock share's detail: what was waited for, largest first, as shares of all the function's samples. */
function lockDetail(l: Map<string, number> | undefined, n: number): string {
  if (!l) return '';
  return ` (${[...l].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([what, k]) => `${share(k, n)} ${what}`).join('; ')})`;
}

const KINDS = ['CPU or run queue', 'own WAL flush', "another's WAL flush", 'row or transaction lock', 'other'];
const share = (k: number, n: number) => (k / n < 0.005 ? '< 1 %' : `${Math.round((k / n) * 100)} %`);

export interface PgWaits {
  /** Samples until stop(); then one line per function: its samples and the share of each kind. */
  start(): void;
  stop(): Promise<string>;
  close(): Promise<void>;
}

/** The sampler's application_name: bench/pg-cpu.ts leaves its backend out of the CPU it counts. */
export const PG_WAITS_APP = 'bench_pg_waits';

export async function pgWaits(databaseUrl: string, everyMs = 2): Promise<PgWaits> {
  const c = new pg.Client({ connectionString: databaseUrl, application_name: PG_WAITS_APP });
  await c.connect();
  let counts = new Map<string, Map<string, number>>();
  /** Per function, its lock waits by what it waited for: "a row of <table> held by <function>". */
  let locks = new Map<string, Map<string, number>>();
  let running: Promise<void> | undefined;
  let on = false;
  const loop = async () => {
    while (on) {
      // A row lock's waiter holds (or waits for) the row's tuple lock: its table; the blocker is named
      // by the hub function its statement calls.
      const r = await c.query<{ t: string | null; e: string | null; q: string; rel: string | null; by: string | null }>(
        `select a.wait_event_type as t, a.wait_event as e, a.query as q,
                case when a.wait_event_type = 'Lock' then
                  (select l.relation::regclass::text from pg_locks l where l.pid = a.pid and l.locktype = 'tuple' limit 1) end as rel,
                case when a.wait_event_type = 'Lock' then
                  (select string_agg(b.query, ' ') from pg_stat_activity b where b.pid = any(pg_blocking_pids(a.pid))) end as by
           from pg_stat_activity a
          where a.datname = current_database() and a.state = 'active' and a.pid <> pg_backend_pid()`,
      );
      for (const row of r.rows) {
        const fn = fnOf(row.q);
        const m = counts.get(fn) ?? new Map<string, number>();
        const k = kindOf(row.t, row.e);
        m.set(k, (m.get(k) ?? 0) + 1);
        counts.set(fn, m);
        if (k === 'row or transaction lock') {
          const l = locks.get(fn) ?? new Map<string, number>();
          const what = `${row.rel ? `a row of ${row.rel}` : 'no row lock (a transaction)'} held by ${row.by ? fnOf(row.by) : 'a finished call'}`;
          l.set(what, (l.get(what) ?? 0) + 1);
          locks.set(fn, l);
        }
      }
      await new Promise((res) => setTimeout(res, everyMs));
    }
  };
  return {
    start() {
      counts = new Map();
      locks = new Map();
      on = true;
      running = loop();
    },
    async stop() {
      on = false;
      await running;
      return [...counts]
        .map(([fn, m]) => [fn, m, [...m.values()].reduce((a, b) => a + b, 0)] as const)
        .sort((a, b) => b[2] - a[2])
        .map(([fn, m, n]) => `${fn} ${n} samples: ${KINDS.filter((k) => m.get(k)).map((k) => `${share(m.get(k)!, n)} ${k}${k === 'row or transaction lock' ? lockDetail(locks.get(fn), n) : ''}`).join(', ')}`)
        .join('; ');
    },
    close: () => c.end(),
  };
}
