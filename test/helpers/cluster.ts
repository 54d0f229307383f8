// Several hubs in this test process on one fresh PostgreSQL database (and one
// Redis when asked): the multi-node tests' common setup.
import { before, after } from 'node:test';
import type { Config } from '../../src/config.js';
import { startTestHub, createTestDatabase, type TestHub } from './hub.js';
import { redisUrlOrSkip, testPrefix } from './redis.js';

export interface Cluster {
  hubs: TestHub[];
  /** Closes the hubs (last first) and drops the database. */
  close(): Promise<void>;
}

/** Why two hubs cannot share a database and a Redis here, if they cannot (a reason to skip with). */
export async function clusterSkipReason(opts: { redis?: boolean } = { redis: true }): Promise<string | undefined> {
  if (opts.redis !== false) {
    const r = await redisUrlOrSkip();
    if ('skip' in r) return r.skip;
  }
  return process.env.DATABASE_URL ? undefined : 'DATABASE_URL is not set (hubs sharing a database need PostgreSQL)';
}

/**
 * Starts one hub per entry of `nodes` (config overrides, e.g. nodeId) on one fresh database; with
 * `redis`, on one Redis under a fresh key prefix. Every hub shares the first one's admin key.
 */
export async function startCluster(nodes: Array<Partial<Config>>, opts: { redis?: boolean } = { redis: true }): Promise<Cluster> {
  const db = await createTestDatabase();
  const redis = opts.redis !== false ? await redisUrlOrSkip() : undefined;
  const shared: Partial<Config> = {
    databaseUrl: db.url, rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0,
    ...(redis && 'url' in redis ? { redisUrl: redis.url, redisPrefix: testPrefix() } : {}),
  };
  const hubs: TestHub[] = [];
  try {
    for (const n of nodes) hubs.push(await startTestHub({ ...shared, ...(hubs[0] ? { adminApiKey: hubs[0].adminKey } : {}), ...n }));
  } catch (e) {
    for (const h of hubs.reverse()) await h.close().catch(() => undefined);
    await db.drop();
    throw e;
  }
  return {
    hubs,
    async close() {
      for (const h of [...hubs].reverse()) await h.close().catch(() => undefined);
      await db.drop();
    },
  };
}

/**
 * Registers node:test `before`/`after` hooks that start the cluster (unless `skip`) and close it;
 * `hubs` is filled once `before` has run.
 */
export function useCluster(skip: string | undefined, nodes: Array<Partial<Config>>, opts?: { redis?: boolean }): { hubs: TestHub[] } {
  const out = { hubs: [] as TestHub[] };
  let cluster: Cluster | undefined;
  before(async () => {
    if (skip) return;
    cluster = await startCluster(nodes, opts);
    out.hubs.push(...cluster.hubs);
  });
  after(async () => {
    await cluster?.close();
  });
  return out;
}
