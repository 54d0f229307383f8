// buildHub(config): opens storage and the bus, wires every domain, and
// listens. Returns a started hub with close(). main.ts and the tests are its
// only callers; the order below is the start-up order, and close() runs the
// named shutdown hooks in reverse.
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { uws, type TemplatedApp } from './server/uws.js';
import { listenExclusive } from './server/listen.js';
import { HttpApi } from './server/http.js';
import { Cors } from './server/cors.js';
import { openDatabase } from './db/orm.js';
import type { EmbeddedBoot } from './db/embedded.js';
import { LocalBus } from './bus/local.js';
import type { Bus } from './bus/bus.js';
import { RateLimits } from './ratelimit/policy.js';
import { MemoryLimiter } from './ratelimit/limiter.js';
import { RedisLimiter } from './ratelimit/redis.js';
import { FailedAuth } from './ratelimit/failures.js';
import { healthRoutes } from './server/health.js';
import { endRevoked } from './server/revoked.js';
import { Drain } from './server/shutdown.js';
import { loadSecrets } from './secrets.js';
import type { HubContext } from './context.js';
import { Authenticator } from './accounts/authenticator.js';
import { AccountService } from './accounts/service.js';
import { accountRoutes } from './accounts/routes.js';
import { ensureAdministrator } from './accounts/bootstrap.js';
import { buildAccountFlows } from './accounts/flows.js';
import { buildBilling, PlanGrantSweeper } from './billing/index.js';
import { buildHosts } from './hosts/index.js';
import type { HostStore } from './hosts/store.js';
import type { HostChannels } from './hosts/gateway-impl.js';
import type { RunTracker } from './sessions/runs.js';
import type { Scheduler } from './sessions/scheduler.js';
import { presenceIn } from './hosts/presence-sharded.js';
import { abortRunsOfLostNodes } from './bus/orphans.js';
import { buildModelConfigs } from './model-configs/index.js';
import { AgentService } from './agents/service.js';
import { agentRoutes } from './agents/routes.js';
import { buildSessions } from './sessions/index.js';
import { HubMetrics } from './metrics/metrics.js';
import { countedBus } from './metrics/bus.js';
import { metricsRoute } from './metrics/route.js';
import { poolOf, queueDepth, timedPing } from './metrics/sources.js';
import { apiDocsRoutes } from './server/api-docs.js';
import { consoleRoutes } from './server/console.js';
import { SESSION_EVENT_SCHEMAS, STREAM_EVENT_SCHEMAS } from './sessions/event-schemas.js';

export interface Hub {
  port: number;
  url: string;
  ctx: HubContext;
  app: TemplatedApp;
  /** The credential caches (tests count their database lookups). */
  auth: Authenticator;
  hostStore: HostStore;
  /** The per-address budget of failed credential checks (tests wait for failures to be counted). */
  failedAuth: FailedAuth;
  /** Run frames: the host channels (dropped frames), this node's run state (loads, size) and scheduler (reconcile), for tests. */
  runFrames: { gateway: HostChannels; runs: RunTracker; scheduler: Scheduler };
  /** SSE accounting (tests and benches): open streams, session subscriptions, bytes held for slow readers. */
  sse: { streams(): number; subscriptions(): number; bufferedBytes(): number };
  /** The route table (the OpenAPI test checks every route is documented). */
  routes: ReadonlyArray<{ method: string; path: string }>;
  close(): Promise<void>;
}

/** `opts.embedded`: the embedded database, already booting (main.ts). */
export async function buildHub(config: Config, opts: { log?: Logger; embedded?: Promise<EmbeddedBoot> } = {}): Promise<Hub> {
  const log = opts.log ?? createLogger(config.logLevel, { node: config.nodeId });
  const hooks: Array<{ name: string; run: () => Promise<void> | void }> = [];
  const onShutdown = (name: string, run: () => Promise<void> | void) => hooks.push({ name, run });
  const close = async () => {
    for (const h of hooks.reverse().splice(0)) {
      try {
        await h.run();
      } catch (e) {
        log.warn('shutdown hook failed', { hook: h.name, err: e });
      }
    }
  };

  try {
    const secrets = loadSecrets(config);
    const db = await openDatabase(config, log, opts.embedded);
    onShutdown('database', () => db.close());
    const metrics = new HubMetrics();
    // ioredis is loaded only with REDIS_URL: a single node never pays for it (start-up time, memory).
    const redis = config.redisUrl ? await (await import('./bus/redis.js')).RedisBus.connect(config.redisUrl, { prefix: config.redisPrefix, log, shardUrls: config.redisShardUrls }) : undefined;
    const bus: Bus = redis ?? new LocalBus();
    onShutdown('bus', () => bus.close());
    // Domains publish and subscribe through the counting decorator; the transport itself is used below only for its Redis client.
    let rawEm: ReturnType<HubContext['rawEm']> | undefined;
    const ctx: HubContext = { config, log, orm: db.orm, bus: countedBus(bus, metrics), secrets, metrics, em: () => db.orm.em.fork(), rawEm: () => (rawEm ??= db.orm.em.fork()) };

    const authenticator = new Authenticator(ctx);
    onShutdown('authenticator', () => authenticator.close());
    const accounts = new AccountService(ctx, authenticator);
    await ensureAdministrator(ctx, accounts);

    const limits = new RateLimits(config, redis ? new RedisLimiter(redis.client, (k) => redis.key(k), log) : new MemoryLimiter());
    onShutdown('rate limits', () => limits.close());
    const failedAuth = new FailedAuth(limits.limiter, config);
    const drain = new Drain();
    const api = new HttpApi(
      {
        authenticate: (t, from) => failedAuth.guard(from, () => authenticator.authenticate(t)),
        before: (r, route) => limits.check(r, route),
        // A stream ends with a shutdown, and when the credential that opened it is revoked.
        streamOpened: (s, p) => {
          drain.track(s);
          if (p) s.onClose(authenticator.watch(p, () => endRevoked(s)));
        },
        answered: (r, m, s, sec) => metrics.request(r, m, s, sec),
      },
      log,
      config.bodyLimit,
      { bufferBytes: config.sseBufferBytes, maxPerAccount: config.sseMaxStreamsPerAccount },
      new Cors(config.allowedOrigins),
    );
    healthRoutes(api, ctx, () => drain.draining);
    metricsRoute(api, metrics, config.metricsToken, failedAuth);
    accountRoutes(api, accounts);
    const accountFlows = buildAccountFlows(ctx, api, authenticator, limits.limiter);
    buildBilling(ctx, api, (userId, verifyToken) => accountFlows.phone.stepUp(userId, verifyToken), limits.limiter);
    const planGrants = new PlanGrantSweeper(ctx);
    onShutdown('plan grants', () => planGrants.close());
    planGrants.start();
    const presence = redis && presenceIn(redis, config.nodeId, log);
    const hosts = buildHosts(ctx, api, presence, failedAuth);
    onShutdown('hosts', () => hosts.close());
    accounts.onHostsRemoved = (list) => hosts.service.removed(list);
    if (presence) abortRunsOfLostNodes(hosts.gateway, presence, config.nodeId, log);
    const agents = new AgentService(ctx, { engines: (userId, hostId) => hosts.service.engines(userId, hostId), gateway: hosts.gateway });
    onShutdown('agents', () => agents.close());
    agentRoutes(api, agents);
    await agents.warm();
    const sessions = buildSessions(ctx, api, hosts.gateway, { stopping: () => drain.draining });
    onShutdown('sessions', () => sessions.close());
    agents.onBeforeDelete((agentId) => sessions.stopAgentRuns(agentId)); // engines stop before the agent's rows go
    hosts.service.onRemoved((hostIds) => agents.hostsRemoved(hostIds));
    hosts.service.onRemoved((hostIds) => sessions.hostsRemoved(hostIds));
    await sessions.start();
    const modelConfigs = buildModelConfigs(ctx, api, hosts);
    modelConfigs.bindings.onLeaseEnd = (hostId) => void sessions.scheduler.drain(hostId); // runs that waited for a settings write
    onShutdown('model-configs', () => modelConfigs.close());
    agents.modelDrafter = (userId, text, configId) => modelConfigs.suggest.draft(userId, text, configId);
    consoleRoutes(api);
    apiDocsRoutes(api, { ...SESSION_EVENT_SCHEMAS, ...STREAM_EVENT_SCHEMAS }); // last: documents every route above

    metrics.sources = {
      hosts: () => hosts.gateway.counts(),
      runsRunning: () => sessions.runs.running,
      queueDepth: () => queueDepth(ctx),
      streamsOpen: () => api.streamsOpen,
      ringBytes: () => sessions.events.ringsBytes,
      pool: () => poolOf(db.orm),
      redisPing: redis ? () => timedPing(() => redis.client.ping()) : undefined,
      busDropped: redis ? () => redis.droppedPublishes : undefined,
    };

    const app = uws.App();
    // WebSocket endpoints first: the HTTP catch-all below would shadow them.
    hosts.attach(app);
    api.attach(app);
    const listenSocket = await listenExclusive(app, config.host, config.port);
    onShutdown('listener', async () => {
      // Graceful part first (see server/shutdown.ts), bounded by half the shutdown budget.
      await drain.run({
        stopAccepting: () => uws.us_listen_socket_close(listenSocket),
        goAway: () => hosts.gateway.close(),
        inFlight: () => api.inFlight,
        graceMs: Math.floor(config.shutdownTimeoutMs / 2),
      });
      // Closes every open connection too; keep-alive clients would hold the process otherwise.
      (app as unknown as { close(): void }).close();
    });
    const port = uws.us_socket_local_port(listenSocket);
    log.info('hub listening', { host: config.host, port, database: db.embedded ? 'embedded' : 'postgresql', bus: bus.kind });
    const sse = { streams: () => api.streamsOpen, subscriptions: () => sessions.events.subscriptions, bufferedBytes: () => api.sseGauge.buffered };
    return { port, url: `http://${config.host}:${port}`, ctx, app, auth: authenticator, hostStore: hosts.store, failedAuth, runFrames: { gateway: hosts.gateway, runs: sessions.runs, scheduler: sessions.scheduler }, sse, routes: api.routes, close };
  } catch (e) {
    await close();
    throw e;
  }
}
