// Raw SQL with bind values on a pooled connection, run by node-postgres
// itself rather than knex's query runner (raw builder, bindings pass, runner,
// executioner, debug), which cost the hub about 40 µs of CPU per call when
// warm and several times that in a connect storm, whose few large calls per
// second never warm it up (perf, bench/hosts-cluster.ts). Same pool, same
// connections, same type parsing, same `?` placeholders (`\?` for a literal
// question mark) as knex's raw; errors are node-postgres's own, with their
// SQLSTATE `code`, and never carry the values.
//
// A few connections are kept back from the pool between calls (Keeper): the
// pool's acquire and release (tarn's pending operation, its timeout, knex's
// validation) cost the hub 2–17 µs of CPU per call on Node 20, 7–33 µs once an
// AsyncLocalStorage is enabled (MikroORM runs one), and 27 promises
// (bench/pool-acquire.ts, bench/RESULTS.md twenty-fourth session); the message
// path makes one or two calls per message.
interface PgConnection {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
  /** Set by knex when the connection errored or ended (it is then destroyed on release). */
  __knex__disposed?: unknown;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<unknown>;
  pool?: { max: number; numFree(): number; numPendingAcquires(): number; on(event: 'acquireRequest', listener: () => void): void } | null;
}

/** Connections kept back at most: a third of the pool, and none from a pool of one or two (PGlite serves one). */
const KEEP_MAX = 3;
/** Kept connections unused this long go back to the pool. */
const KEEP_IDLE_MS = 1000;

/**
 * Idle connections of one knex client kept for the next call, most recent first. One goes back to
 * the pool when it is not fit to keep (an error, knex disposed of it), when enough are kept, when
 * anyone asks the pool for a connection and none is free, or waits for one, and all of them once
 * none was used for KEEP_IDLE_MS or at close.
 */
class Keeper {
  private idle: PgConnection[] = [];
  private used = false;
  private timer?: NodeJS.Timeout;

  constructor(private readonly client: PooledClient) {
    // Anyone asking a pool with no free connection (a transaction, another call) gets a kept one
    // rather than wait for it, or for a new connection to be made.
    client.pool?.on('acquireRequest', () => {
      if (this.client.pool?.numFree() !== 0) return;
      const c = this.idle.pop();
      if (c) void this.client.releaseConnection(c);
    });
  }

  private get max(): number {
    return Math.min(KEEP_MAX, Math.floor((this.client.pool?.max ?? 0) / 3));
  }

  take(): PgConnection | Promise<PgConnection> {
    this.used = true;
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (!c.__knex__disposed) return c;
      void this.client.releaseConnection(c);
    }
    return this.client.acquireConnection();
  }

  give(c: PgConnection, failed: boolean): void {
    const pool = this.client.pool;
    if (failed || c.__knex__disposed || !pool || this.idle.length >= this.max || pool.numPendingAcquires() > 0) {
      void this.client.releaseConnection(c);
      return;
    }
    this.idle.push(c);
    this.timer ??= setInterval(() => {
      if (!this.used) this.releaseAll();
      this.used = false;
    }, KEEP_IDLE_MS).unref();
  }

  get size(): number {
    return this.idle.length;
  }

  releaseAll(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.idle.splice(0)) void this.client.releaseConnection(c);
  }
}

const keepers = new WeakMap<object, Keeper>();
function keeperOf(client: PooledClient): Keeper {
  let k = keepers.get(client);
  if (!k) keepers.set(client, (k = new Keeper(client)));
  return k;
}

/** Connections kept back now: out of the pool by its own count, idle by the hub's (metrics count them free). */
export function keptConnections(knex: { client: unknown }): number {
  return keepers.get(knex.client as object)?.size ?? 0;
}

/** Gives the kept connections back to the pool (before it is destroyed: it waits for every connection out). */
export function releaseKept(knex: { client: unknown }): void {
  keepers.get(knex.client as object)?.releaseAll();
}

/** `?` → `$1`, `$2`, …, as knex's PostgreSQL dialect numbers them; throws when the count is not the values'. */
export function positional(sql: string, count: number): string {
  let n = 0;
  const text = sql.replace(/(\\*)(\?)/g, (_m, escapes: string) => (escapes.length % 2 ? '?' : `$${++n}`));
  if (n !== count) throw new Error(`expected ${count} bindings, saw ${n}`);
  return text;
}

/** `knex`: MikroORM's knex instance (its `client` holds the pool). */
export async function direct<T>(knex: { client: unknown }, sql: string, params: unknown[]): Promise<T[]> {
  const text = positional(sql, params.length);
  const keeper = keeperOf(knex.client as PooledClient);
  const conn = await keeper.take();
  let failed = true;
  try {
    const rows = (await conn.query(text, params)).rows as T[];
    failed = false;
    return rows;
  } finally {
    keeper.give(conn, failed);
  }
}
