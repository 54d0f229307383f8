// PostgreSQL CPU time spent for one database's connections, for "PostgreSQL
// CPU milliseconds per message" (issue 15): the summed utime + stime of its
// backends, read from /proc/<pid>/stat (PostgreSQL on this machine) before
// and after a phase. Backends come from pg_stat_activity, split by
// application_name so the hub's and the bare relay's are told apart; a
// backend that exits between two readings loses its time (pools keep theirs).
// The same connection reads the cluster's WAL position, for "WAL bytes per
// message" (bench/dispatch.ts): cluster-wide, so only phases that run alone count.
import pg from 'pg';
import { PG_WAITS_APP } from './pg-waits.js';
import { processCpuMs } from './proc-cpu.js';

/** utime + stime of a process in ms, or 0 when it is gone or not visible. */
const cpuMs = (pid: number): number => processCpuMs(pid) ?? 0;

export interface PgCpu {
  /** CPU ms so far of the backends whose application_name is (`app`) or is not (`!app`) the given one. */
  read(app: string, not?: boolean): Promise<number>;
  /** The cluster's current WAL insert position, as text and as a byte offset. */
  walLsn(): Promise<{ lsn: string; bytes: number }>;
  close(): Promise<void>;
}

export async function pgCpu(databaseUrl: string): Promise<PgCpu> {
  const c = new pg.Client({ connectionString: databaseUrl, application_name: 'bench_pg_cpu' });
  await c.connect();
  return {
    async read(app, not = false) {
      const r = await c.query(
        // The wait sampler's backend is the bench's own load, neither the hub's nor the relay's.
        `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (application_name = $1) = $2 and application_name <> $3`,
        [app, !not, PG_WAITS_APP],
      );
      return r.rows.reduce((sum: number, row: { pid: number }) => sum + cpuMs(row.pid), 0);
    },
    async walLsn() {
      const r = await c.query(`select pg_current_wal_lsn()::text as lsn, pg_current_wal_lsn() - '0/0'::pg_lsn as bytes`);
      return { lsn: r.rows[0].lsn, bytes: Number(r.rows[0].bytes) };
    },
    close: () => c.end(),
  };
}
