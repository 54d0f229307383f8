// What every domain service receives. Built once by buildHub.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { Bus } from './bus/bus.js';
import type { Secrets } from './secrets.js';
import type { HubMetrics } from './metrics/metrics.js';

export interface HubContext {
  config: Config;
  log: Logger;
  orm: MikroORM;
  bus: Bus;
  secrets: Secrets;
  /** This hub's metrics registry (one per hub). */
  metrics: HubMetrics;
  /** A fresh EntityManager for one unit of work. */
  em(): ReturnType<MikroORM['em']['fork']>;
  /**
   * One EntityManager, the same on every call, for raw SQL outside a transaction (sessions/sql.ts's
   * rows and bound): such SQL keeps nothing in it, so the message path's batches need no fork each
   * (≈ 7 KB and 2 µs a fork; bench/RESULTS.md, twenty-seventh session). Typed so that nothing
   * but its connection and transaction context can be reached: never entities.
   */
  rawEm(): Pick<ReturnType<MikroORM['em']['fork']>, 'getConnection' | 'getTransactionContext'>;
}
