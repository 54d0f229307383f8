// Builds a hub on port 0 with a database of its own: a fresh PostgreSQL
// database when DATABASE_URL is set (dropped after), else in-memory PGlite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { buildHub, type Hub } from '../../src/hub.js';
import type { Logger } from '../../src/log.js';
import { createClient, type Client } from '../../src/client/index.js';
import { drawPort } from './ports.js';

export interface ApiResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestHub {
  hub: Hub;
  url: string;
  adminKey: string;
  config: Config;
  api<T = any>(method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string>; raw?: string }): Promise<ApiResult<T>>;
  /** The typed client (src/client) signed in with `token` (an API key or access token), anonymous without one. */
  client(token?: string): Client;
  /** The typed client signed in as the administrator. */
  admin: Client;
  /** Creates a user through the admin API; returns its id and API key. */
  user(name?: string): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/** A fresh database on the PostgreSQL server of `base` (DATABASE_URL by default); none without one. */
export async function createTestDatabase<B extends string | undefined = string | undefined>(base: B = process.env.DATABASE_URL as B): Promise<{ url: B; drop(): Promise<void> }> {
  if (!base) return { url: undefined as B, drop: async () => {} };
  const name = `hubtest_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString() as B,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * Hands every statement the hub sends — through knex or not, each is a query of its node-postgres
 * Client — to `wrap`, with its text, its bound values and the call that sends it, until the returned
 * restore is called. The Client is MikroORM's own copy of node-postgres (vendored by the build and by
 * npm test's loader, test/helpers/loader.mjs), not the `pg` a test imports.
 */
export function wrapHubQueries(hub: Hub, wrap: (q: { text: string; values: unknown[] }, send: () => unknown) => unknown): () => void {
  const Client = (hub.ctx.orm.em.getConnection().getKnex().client as unknown as { driver: typeof pg }).driver.Client;
  const query = Client.prototype.query;
  Client.prototype.query = function (this: pg.Client, ...a: any[]) {
    const text: string = typeof a[0] === 'string' ? a[0] : a[0]?.text ?? '';
    const values: unknown[] = (Array.isArray(a[1]) ? a[1] : a[0]?.values) ?? [];
    return wrap({ text, values }, () => (query as any).apply(this, a));
  } as typeof query;
  return () => void (Client.prototype.query = query);
}

/** `opts.log`: the hub's logger (a test that reads the hub's lines passes one writing where it can see them). */
export async function startTestHub(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = {}, opts: { log?: Logger } = {}): Promise<TestHub> {
  const db = overrides.databaseUrl ? { url: overrides.databaseUrl, drop: async () => {} } : await createTestDatabase();
  const adminKey = overrides.adminApiKey ?? 'ahk_' + randomBytes(24).toString('hex');
  const loaded = loadConfig({ SECRET_KEY: 'test-secret-' + randomBytes(8).toString('hex'), ...env });
  const config: Config = {
    ...loaded,
    // Channel orders get the sandbox pay page unless a test configures a channel or passes PAYMENT_SANDBOX=0.
    payments: { ...loaded.payments, sandbox: env.PAYMENT_SANDBOX !== '0' },
    port: 0,
    dataDir: ':memory:',
    databaseUrl: db.url,
    redisUrl: undefined,
    adminApiKey: adminKey,
    // Test files hammer one hub from 127.0.0.1 (polling loops): no general rate limits unless a test sets them.
    rateLimitPerMinute: 0,
    rateLimitPerIpPerMinute: 0,
    authFailuresPerIpPerMinute: 0,
    // Accounts can run turns without buying tokens; the money tests set their own starting balance.
    starterTokens: 1_000_000,
    // Plan quotas would cap the hosts, agents and sessions the suites create; the quota tests turn them on.
    planQuotas: false,
    // Fake hosts rarely answer run.abort with a run.end: an aborted run gives its slot back (and a session's
    // delete goes on) at once, as before ENGINE_STOP_GRACE_MS; the tests of that grace set their own.
    engineStopGraceMs: 0,
    logLevel: (process.env.TEST_LOG_LEVEL as Config['logLevel']) ?? 'silent',
    ...overrides,
  };
  let hub: Hub;
  try {
    hub = await buildHub(config, { log: opts.log });
  } catch (e) {
    await db.drop(); // a hub that did not start leaves no database behind
    throw e;
  }
  const url = hub.url;
  const api: TestHub['api'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  const client = (token?: string) => createClient({ baseUrl: url, token });
  const admin = client(adminKey);
  return {
    hub,
    url,
    adminKey,
    config,
    api,
    client,
    admin,
    async user(name = 'user-' + randomBytes(3).toString('hex')) {
      const made = await admin.admin.createUser({ name });
      return { id: made.user.id, key: made.apiKey };
    },
    async close() {
      await hub.close();
      await db.drop();
    },
  };
}

/** A hub on a fixed port (what the port tests need), drawn below the ephemeral range (ports.ts); a port some other program listens on is skipped for another draw. */
export async function startTestHubOnFixedPort(overrides: Partial<Config> = {}): Promise<TestHub> {
  let last: unknown;
  for (let i = 0; i < 8; i++) {
    const port = drawPort();
    try {
      return await startTestHub({ ...overrides, port });
    } catch (e) {
      if (!/already in use/.test((e as Error).message)) throw e;
      last = e;
    }
  }
  throw last;
}
