// Lines the hub's statements up behind rows a test holds locked, on connections of the test's own (the
// hub's pool holds the waiting requests): two requests racing past their reads, made deterministic.
// PostgreSQL only: PGlite serves one connection at a time.
import assert from 'node:assert/strict';
import pg from 'pg';

export interface RowLock {
  /** Begins the holding transaction and locks the rows `sql` selects (`… for update`). */
  hold(sql: string, params: unknown[]): Promise<void>;
  /** Resolves once `n` statements whose text starts like `like` (SQL LIKE) wait on a lock; fails the test after ~10 s. */
  until(like: string, n: number): Promise<void>;
  /** Runs a statement inside the holding transaction (a write that lands between the waiters' reads and writes). */
  query(sql: string, params: unknown[]): Promise<void>;
  /** Commits the holding transaction: the waiters go on. */
  release(): Promise<void>;
  close(): Promise<void>;
}

export async function rowLock(databaseUrl: string): Promise<RowLock> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  const watcher = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([holder.connect(), watcher.connect()]);
  let open = false;
  const waiting = async (like: string) =>
    // This database only: other test files run beside this one on the same server, each in a database of its own.
    (await watcher.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like $1`, [like]))
      .rows[0].n as number;
  const lock: RowLock = {
    async hold(sql, params) {
      await holder.query('begin');
      open = true;
      await holder.query(sql, params);
    },
    async until(like, n) {
      for (let i = 0; (await waiting(like)) < n && i < 500; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await waiting(like), n, `precondition: ${n} statements like '${like}' wait on the held rows`);
    },
    async query(sql, params) {
      await holder.query(sql, params);
    },
    async release() {
      if (!open) return;
      open = false;
      await holder.query('commit');
    },
    async close() {
      await lock.release().catch(() => undefined);
      await Promise.all([holder.end(), watcher.end()]);
    },
  };
  return lock;
}
