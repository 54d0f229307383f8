// MikroORM on PostgreSQL, or on the embedded PGlite when no DATABASE_URL is
// given. The same entities and migrations serve both.
import { MikroORM, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { keepDriverMessage, type Logger } from '../log.js';
import { startEmbedded, type Embedded, type EmbeddedBoot } from './embedded.js';
import { migrate } from './migrate.js';
import { releaseKept } from './direct.js';
import { allEntities } from './registry.js';
import { scopeAsyncContexts } from './async-context.js';

export type Orm = MikroORM;

/** Longest wait for a pooled PostgreSQL connection (a burst waits milliseconds; an outage would wait forever). */
export const DB_ACQUIRE_TIMEOUT_MS = 5000;

export interface Database {
  orm: MikroORM;
  embedded: boolean;
  /** The embedded database's data directory as a gzipped tarball (db/template.ts makes the template with it). */
  dumpEmbedded?(): Promise<Blob>;
  close(): Promise<void>;
}

/**
 * `booting`: the embedded database already starting (main.ts starts it before loading the rest of the
 * hub, so PGlite's WebAssembly compiles on V8's background threads while the main thread loads modules).
 * Its address is known before it is up: MikroORM discovers the entities meanwhile and connects after.
 */
export async function openDatabase(cfg: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'dbPoolSize'>>, log: Logger, booting?: EmbeddedBoot | Promise<EmbeddedBoot>): Promise<Database> {
  // Never the database URL in a line: it may carry a password.
  const t0 = performance.now();
  const boot = cfg.databaseUrl ? undefined : await (booting ?? startEmbedded(cfg.dataDir, log));
  const options: Options = {
    entities: allEntities as EntitySchema[],
    clientUrl: boot ? boot.url : clientUrlOf(cfg.databaseUrl!),
    connect: !boot,
    // PGlite serves one connection at a time. On PostgreSQL the pool is opened whole at start and
    // kept: a connection made during a burst costs its first requests a connect and cold plans.
    // While PostgreSQL is down a request waits at most DB_ACQUIRE_TIMEOUT_MS for a connection, then
    // answers 503 (server/unavailable.ts), rather than knex's default minute.
    pool: boot ? { min: 0, max: 1 } : { min: cfg.dbPoolSize ?? 10, max: cfg.dbPoolSize ?? 10, acquireTimeoutMillis: DB_ACQUIRE_TIMEOUT_MS },
    // The list itself is set by db/migrate.ts when a migration is pending.
    migrations: { transactional: true, allOrNothing: true, snapshot: false, silent: true },
    allowGlobalContext: false,
    debug: false,
    discovery: { warnWhenNoEntities: false },
    // Timestamps are stored as timestamptz and always read as UTC.
    timezone: '+00:00',
    forceUtcTimezone: true,
    // A failed statement's error reads `<statement> - <message>` without knex writing the values in (log.ts).
    driverOptions: { compileSqlOnError: false },
  };
  scopeAsyncContexts(); // before MikroORM opens a store: promise hooks only while one of its contexts is open
  let orm: MikroORM;
  let embedded: Embedded | undefined;
  try {
    orm = await MikroORM.init(options);
  } catch (e) {
    void boot?.ready.then((db) => db.close(), () => {}); // a database nobody will use
    throw cfg.databaseUrl ? unanswered(e, cfg.databaseUrl) : e;
  }
  if (boot) {
    try {
      embedded = await boot.ready;
      await orm.connect();
    } catch (e) {
      await orm.close(true);
      await embedded?.close();
      throw e;
    }
  }
  // Its driver message kept before MikroORM adds anything: what a line may say of a failed statement (log.ts).
  orm.em.getConnection().getKnex().on('query-error', (err: unknown, q: { sql?: unknown }) => keepDriverMessage(err, q?.sql));
  const applied = await migrate(orm, !embedded);
  log.info('migrations applied', { count: applied.length, names: applied, database: embedded ? 'embedded' : 'postgresql', ...(embedded && { origin: embedded.origin }), ms: Math.round(performance.now() - t0) });
  return {
    orm,
    embedded: !!embedded,
    dumpEmbedded: embedded && (() => embedded.dump()),
    async close() {
      releaseKept(orm.em.getConnection().getKnex()); // the pool's end waits for every connection out of it
      await orm.close(true);
      await embedded?.close();
    },
  };
}

/**
 * A server that never greets (a firewall dropping packets, a wrong port) surfaces as knex's "Timeout acquiring
 * a connection. The pool is probably full…", which sends an operator looking at the wrong thing: name the
 * address and the wait instead (never the URL: it may carry a password).
 */
function unanswered(e: unknown, url: string): unknown {
  if ((e as Error | undefined)?.name !== 'KnexTimeoutError') return e;
  let at = 'DATABASE_URL';
  try {
    const u = new URL(url);
    at = u.searchParams.get('host') ?? `${u.hostname}:${u.port || 5432}`;
  } catch {
    // not a URL: the variable's name says where to look
  }
  return new Error(`no answer from PostgreSQL at ${at} within ${DB_ACQUIRE_TIMEOUT_MS / 1000} s: is it a PostgreSQL server, and reachable from here?`, { cause: e });
}

/**
 * libpq's `?host=/socket/dir` (a Unix socket), which MikroORM ignores (it would connect over TCP
 * to the URL's host instead), as the percent-encoded host it reads.
 */
export function clientUrlOf(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  const socketDir = u.searchParams.get('host');
  if (!socketDir?.startsWith('/')) return url;
  u.searchParams.delete('host');
  u.hostname = encodeURIComponent(socketDir);
  return u.toString();
}
