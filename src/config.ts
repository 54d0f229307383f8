// The one place the environment is read. Everything else receives a Config.
import { resolve } from 'node:path';
import { HOST_FRAMES_PER_SECOND_DEFAULT } from '../host-protocol/limits.js';
import { CONNECTS_PER_HOST_PER_MINUTE } from './hosts/connect-rate.js';

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL URL; unset → embedded PGlite under dataDir/pg. */
  databaseUrl?: string;
  /** PostgreSQL connections per node, all opened at start and kept (a burst never waits for a new one). */
  dbPoolSize: number;
  dataDir: string;
  redisUrl?: string;
  /** More Redis instances for the bus's keyed topics (a session's events, a node's host frames) and the hosts' presence, hashed over them; empty: REDIS_URL carries all. */
  redisShardUrls: string[];
  /** Master secret; unset → generated once into dataDir (see secrets.ts). */
  secretKey?: string;
  adminApiKey?: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Bytes held for one SSE reader that does not keep up before it is dropped. */
  sseBufferBytes: number;
  /** SSE streams one account may hold open on a node at once (0: no cap). */
  sseMaxStreamsPerAccount: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Access-token lifetime for the browser login flow, seconds. */
  jwtTtlSeconds: number;
  refreshTtlSeconds: number;
  /** External OpenID Provider (endpoints found by discovery from the issuer); unset → login answers 503. */
  /** `name`: what the console's button says ("Sign in with <name>"): OIDC_PROVIDER_NAME, else the issuer's host. */
  oidc?: { issuer: string; clientId: string; clientSecret: string; redirectUri: string; name?: string };
  /** Phone-code delivery: codes are POSTed to this URL; unset → phone binding answers 503. */
  smsWebhookUrl?: string;
  /** Shared secret the chat-platform bot sends to POST /api/v1/chatapp/confirm; unset → 503. */
  chatappWebhookSecret?: string;
  /** When set, GET /metrics wants `Authorization: Bearer <it>`; unset, /metrics is open. */
  metricsToken?: string;
  /** Model connectivity test: request timeout and private-network egress rule. */
  modelTestTimeoutMs: number;
  /** Loopback and private endpoints allowed in the hub-side connectivity test (metadata never). */
  modelTestAllowPrivate: boolean;
  /** Requests per minute, per API key (or per IP when anonymous). 0 disables. */
  rateLimitPerMinute: number;
  /** Requests per minute from one client IP, whoever the caller. 0 disables. */
  rateLimitPerIpPerMinute: number;
  /** `POST /me/phone/send-code` per account (or IP) per hour. 0 disables. */
  rateLimitPhoneCodePerHour: number;
  /** `POST /model-configs/test` per account (or IP) per minute. 0 disables. */
  rateLimitModelTestPerMinute: number;
  /** ai-fill calls per minute per account (a model call each). */
  rateLimitAiFillPerMinute: number;
  /** Failed credential checks (API key, login token, host credential) per client IP per minute before 429. 0 disables. */
  authFailuresPerIpPerMinute: number;
  /** How long an in-process credential cache entry is trusted without a Bus invalidation (bounds a revocation lost in a Redis outage), ms. */
  authCacheTtlMs: number;
  /** How long a run the hub aborted keeps its slot of the host's capacity unless the host reports its engine gone first, ms. */
  engineStopGraceMs: number;
  /** How often each node compares its agents catalog with the table and reloads rows that differ (an agent event lost for good), ms. */
  agentsResyncMs: number;
  /** Origins (scheme://host[:port], exact) whose pages may call the API from a browser (CORS); none by default. */
  allowedOrigins: string[];
  /** Behind a proxy: the client IP is the last X-Forwarded-For entry (the proxy appended it). */
  trustProxy: boolean;
  /** Prefix of every Redis key and channel, so several hubs can share one Redis. */
  redisPrefix: string;
  /** Bound on a graceful shutdown (SIGTERM) before the process exits anyway, ms. */
  shutdownTimeoutMs: number;
  /** How long a host may stay silent before it reads offline, ms. */
  hostHeartbeatTimeoutMs: number;
  /** Identifies this process among hub nodes. */
  nodeId: string;
  /** Tokens a new account starts with (a `grant` ledger entry). */
  starterTokens: number;
  /** Tokens that must back each run of a user on another account's agent, running or waiting (a run there is charged at most the balance it finds). */
  guestRunMinBalance: number;
  /** Share of a run's cost credited to the owner of a paid agent run by someone else (0..1). */
  ownerShare: number;
  /** Enforce plan quotas (hosts, agents, sessions per day); PLAN_QUOTAS=off turns it off. */
  planQuotas: boolean;
  /** How often each node looks for plans whose new 30-day period has not been granted yet, ms (0 = never). */
  planGrantSweepMs: number;
  /** Frames per second a host channel may send on average (token bucket; see src/limits.ts). */
  hostFramesPerSecond: number;
  /** Sockets one host may open on a node per minute (src/hosts/connect-rate.ts); 0 = no limit. */
  hostConnectsPerMinute: number;
  /** Streamed text one run may hold unsaved before it ends with OUTPUT_TOO_LARGE, bytes. */
  runOutputMaxBytes: number;
  /** Output one run may store in all (its messages, never decreasing), bytes; over it the run ends with OUTPUT_TOO_LARGE. */
  runStoredMaxBytes: number;
  /** What one session may store (its messages and its runs' output): a message that would take it over is refused (409); 0 = no bound. */
  sessionStoredMaxBytes: number;
  /** What all of one account's sessions may store: past it no session opens and messages are refused (409); 0 = no bound. */
  accountStoredMaxBytes: number;
  /** Payment channels (billing/payments); a channel left unset answers 503 5031 at order creation unless the sandbox stands in. */
  payments: PaymentsConfig;
}

export interface PaymentsConfig {
  /** `PAYMENT_SANDBOX=1`: a pay page on the hub stands in for every channel not configured below. */
  sandbox: boolean;
  /** The hub's public base URL as providers and payers reach it (notify and return addresses); needed by real channels. */
  publicUrl?: string;
  alipay?: { appId: string; privateKey: string; alipayPublicKey: string; gateway: string; returnUrl?: string };
  wechat?: { mchId: string; appId: string; serialNo: string; privateKey: string; apiV3Key: string; platformPublicKey: string; platformSerial?: string; baseUrl: string };
}

/** A channel is configured when all of its required variables are set; a partial set is an operator error. */
function channel<K extends string>(env: NodeJS.ProcessEnv, name: string, vars: Record<K, string>): Record<K, string> | undefined {
  const got = Object.entries(vars).filter(([, v]) => env[v as string]);
  if (got.length === 0) return undefined;
  const missing = Object.values<string>(vars).filter((v) => !env[v]);
  if (missing.length) throw new ConfigError(`${name} payment channel is partly configured: set ${missing.join(', ')} too (or none of its variables)`);
  return Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, env[v as string]!])) as Record<K, string>;
}

function loadPayments(env: NodeJS.ProcessEnv): PaymentsConfig {
  const publicUrl = env.PAYMENT_PUBLIC_URL ? env.PAYMENT_PUBLIC_URL.replace(/\/+$/, '') : undefined;
  if (publicUrl && !/^https?:\/\/[^/]+/i.test(publicUrl)) throw new ConfigError(`PAYMENT_PUBLIC_URL must be an http(s) URL, got ${JSON.stringify(env.PAYMENT_PUBLIC_URL)}`);
  const ali = channel(env, 'Alipay', { appId: 'ALIPAY_APP_ID', privateKey: 'ALIPAY_PRIVATE_KEY', alipayPublicKey: 'ALIPAY_PUBLIC_KEY' });
  const wx = channel(env, 'WeChat Pay', {
    mchId: 'WECHAT_PAY_MCH_ID', appId: 'WECHAT_PAY_APP_ID', serialNo: 'WECHAT_PAY_SERIAL_NO', privateKey: 'WECHAT_PAY_PRIVATE_KEY',
    apiV3Key: 'WECHAT_PAY_API_V3_KEY', platformPublicKey: 'WECHAT_PAY_PLATFORM_PUBLIC_KEY',
  });
  if ((ali || wx) && !publicUrl) throw new ConfigError('PAYMENT_PUBLIC_URL is required when a payment channel is configured (providers post their notifications to it)');
  return {
    sandbox: env.PAYMENT_SANDBOX === '1',
    publicUrl,
    alipay: ali && { ...ali, gateway: env.ALIPAY_GATEWAY || 'https://openapi.alipay.com/gateway.do', returnUrl: env.ALIPAY_RETURN_URL || undefined },
    wechat: wx && { ...wx, platformSerial: env.WECHAT_PAY_PLATFORM_SERIAL || undefined, baseUrl: (env.WECHAT_PAY_BASE_URL || 'https://api.mch.weixin.qq.com').replace(/\/+$/, '') },
  };
}

/** A configuration mistake: the message names the variable; main.ts prints it and exits 2, no stack trace. */
export class ConfigError extends Error {}

/** The shortest heartbeat window: two of the hosts' fastest pings (one a second). */
export const MIN_HEARTBEAT_WINDOW_MS = 2000;

function int(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new ConfigError(`${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

function oidcConfig(env: NodeJS.ProcessEnv): Config['oidc'] {
  const retired = ['OIDC_AUTHORIZE_URL', 'OIDC_TOKEN_URL', 'OIDC_USERINFO_URL', 'OIDC_LOGOUT_URL'].filter((k) => env[k]);
  // Refuse to start rather than silently turn the login off for an operator who upgraded.
  if (retired.length) throw new ConfigError(`${retired.join(', ')}: replaced by OIDC_ISSUER (endpoints come from the provider's discovery document); remove them`);
  if (!env.OIDC_ISSUER) return undefined;
  let u: URL;
  try {
    u = new URL(env.OIDC_ISSUER);
  } catch {
    throw new ConfigError(`OIDC_ISSUER must be an absolute URL, got ${JSON.stringify(env.OIDC_ISSUER)}`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.search || u.hash) throw new ConfigError('OIDC_ISSUER must be an http(s) URL without query or fragment');
  const missing = ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_REDIRECT_URI'].filter((k) => !env[k]);
  if (missing.length) throw new ConfigError(`OIDC_ISSUER is set but ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not`);
  return { issuer: env.OIDC_ISSUER, clientId: env.OIDC_CLIENT_ID!, clientSecret: env.OIDC_CLIENT_SECRET!, redirectUri: env.OIDC_REDIRECT_URI!, name: (env.OIDC_PROVIDER_NAME || u.host).slice(0, 80) };
}

/** REDIS_SHARD_URLS: redis:// or rediss:// URLs, comma-separated, only beside REDIS_URL. */
function redisShardUrls(env: NodeJS.ProcessEnv): string[] {
  const list = (env.REDIS_SHARD_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  if (list.length && !env.REDIS_URL) throw new ConfigError('REDIS_SHARD_URLS needs REDIS_URL (cluster-wide topics and rate limits stay there)');
  // A credential in a malformed URL is not echoed in the error.
  for (const u of list) if (!/^rediss?:\/\/[^\s]+$/i.test(u)) throw new ConfigError(`REDIS_SHARD_URLS must list redis:// or rediss:// URLs separated by commas, got ${JSON.stringify(u.includes('@') ? '…@' + u.slice(u.lastIndexOf('@') + 1) : u)}`);
  if (new Set(list).size !== list.length) throw new ConfigError('REDIS_SHARD_URLS lists one URL twice');
  return list;
}

/** `ALLOWED_ORIGINS`: comma-separated exact origins. No wildcard: an origin allowed here may call the API with a user's bearer token. */
function allowedOrigins(v: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (v ?? '').split(',')) {
    const o = raw.trim();
    if (!o) continue;
    let u: URL | undefined;
    try {
      u = new URL(o);
    } catch {
      u = undefined;
    }
    // An origin is exactly what a browser sends in `Origin`: scheme, host and port, nothing after.
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== o) {
      throw new ConfigError(`ALLOWED_ORIGINS must list origins like https://console.example.com (scheme://host[:port], no path or trailing slash), got ${JSON.stringify(o)}`);
    }
    out.push(o);
  }
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const oidc = oidcConfig(env);
  const cfg: Config = {
    port: int(env, 'PORT', 8080),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dbPoolSize: Math.max(1, int(env, 'DB_POOL_SIZE', 10)),
    dataDir: resolve(env.DATA_DIR || './data'),
    redisUrl: env.REDIS_URL || undefined,
    redisShardUrls: redisShardUrls(env),
    secretKey: env.SECRET_KEY || undefined,
    adminApiKey: env.ADMIN_API_KEY || undefined,
    bodyLimit: int(env, 'BODY_LIMIT', 1024 * 1024),
    sseBufferBytes: Math.max(16 * 1024, int(env, 'SSE_BUFFER_BYTES', 1024 * 1024)),
    sseMaxStreamsPerAccount: Math.max(0, int(env, 'SSE_MAX_STREAMS_PER_ACCOUNT', 20)),
    logLevel: (env.LOG_LEVEL as Config['logLevel']) || 'info',
    jwtTtlSeconds: int(env, 'JWT_TTL_SECONDS', 900),
    refreshTtlSeconds: int(env, 'REFRESH_TTL_SECONDS', 30 * 24 * 3600),
    oidc,
    smsWebhookUrl: env.SMS_WEBHOOK_URL || undefined,
    chatappWebhookSecret: env.CHATAPP_WEBHOOK_SECRET || undefined,
    metricsToken: env.METRICS_TOKEN || undefined,
    modelTestTimeoutMs: int(env, 'MODEL_TEST_TIMEOUT_MS', 120_000),
    modelTestAllowPrivate: env.MODEL_TEST_ALLOW_PRIVATE === '1',
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 600),
    rateLimitPerIpPerMinute: int(env, 'RATE_LIMIT_PER_IP_PER_MINUTE', 1200),
    rateLimitPhoneCodePerHour: int(env, 'RATE_LIMIT_PHONE_CODE_PER_HOUR', 5),
    rateLimitModelTestPerMinute: int(env, 'RATE_LIMIT_MODEL_TEST_PER_MINUTE', 10),
    rateLimitAiFillPerMinute: int(env, 'RATE_LIMIT_AI_FILL_PER_MINUTE', 10),
    authFailuresPerIpPerMinute: int(env, 'AUTH_FAILURES_PER_IP_PER_MINUTE', 30),
    authCacheTtlMs: Math.max(1000, int(env, 'AUTH_CACHE_TTL_MS', 30_000)),
    agentsResyncMs: Math.max(100, int(env, 'AGENTS_RESYNC_MS', 300_000)),
    engineStopGraceMs: Math.max(0, int(env, 'ENGINE_STOP_GRACE_MS', 10_000)),
    allowedOrigins: allowedOrigins(env.ALLOWED_ORIGINS),
    trustProxy: env.TRUST_PROXY === '1',
    redisPrefix: env.REDIS_PREFIX ?? 'ah:',
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000),
    hostHeartbeatTimeoutMs: int(env, 'HOST_HEARTBEAT_TIMEOUT_MS', 15_000),
    nodeId: env.NODE_ID || `node-${process.pid}`,
    starterTokens: int(env, 'STARTER_TOKENS', 10_000),
    guestRunMinBalance: int(env, 'GUEST_RUN_MIN_BALANCE', 1_000),
    ownerShare: int(env, 'OWNER_SHARE', 0.2),
    planQuotas: env.PLAN_QUOTAS !== 'off',
    planGrantSweepMs: int(env, 'PLAN_GRANT_SWEEP_MS', 5 * 60_000),
    hostFramesPerSecond: Math.max(1, int(env, 'HOST_FRAMES_PER_SECOND', HOST_FRAMES_PER_SECOND_DEFAULT)),
    hostConnectsPerMinute: Math.max(0, int(env, 'HOST_CONNECTS_PER_MINUTE', CONNECTS_PER_HOST_PER_MINUTE)),
    runOutputMaxBytes: Math.max(64 * 1024, int(env, 'RUN_OUTPUT_MAX_BYTES', 8 * 1024 * 1024)),
    runStoredMaxBytes: Math.max(64 * 1024, int(env, 'RUN_STORED_MAX_BYTES', 64 * 1024 * 1024)),
    sessionStoredMaxBytes: Math.max(0, int(env, 'SESSION_STORED_MAX_BYTES', 256 * 1024 * 1024)),
    accountStoredMaxBytes: Math.max(0, int(env, 'ACCOUNT_STORED_MAX_BYTES', 4 * 1024 * 1024 * 1024)),
    payments: loadPayments(env),
  };
  if (env.PLAN_QUOTAS !== undefined && env.PLAN_QUOTAS !== '' && env.PLAN_QUOTAS !== 'on' && env.PLAN_QUOTAS !== 'off') throw new ConfigError(`PLAN_QUOTAS must be on or off, got ${JSON.stringify(env.PLAN_QUOTAS)}`);
  if (!Number.isSafeInteger(cfg.starterTokens) || cfg.starterTokens < 0) throw new ConfigError(`STARTER_TOKENS must be a whole number ≥ 0, got ${JSON.stringify(env.STARTER_TOKENS)}`);
  if (!Number.isSafeInteger(cfg.guestRunMinBalance) || cfg.guestRunMinBalance < 0 || cfg.guestRunMinBalance > 1e12) throw new ConfigError(`GUEST_RUN_MIN_BALANCE must be a whole number from 0 to 10^12, got ${JSON.stringify(env.GUEST_RUN_MIN_BALANCE)}`);
  // Hosts ping at most once a second (the protocol's floor): a shorter window judges on-time hosts silent.
  if (cfg.hostHeartbeatTimeoutMs < MIN_HEARTBEAT_WINDOW_MS) {
    throw new ConfigError(`HOST_HEARTBEAT_TIMEOUT_MS must be at least ${MIN_HEARTBEAT_WINDOW_MS} (hosts ping at most once a second), got ${JSON.stringify(env.HOST_HEARTBEAT_TIMEOUT_MS)}`);
  }
  if (!(cfg.ownerShare >= 0 && cfg.ownerShare <= 1)) throw new ConfigError(`OWNER_SHARE must be a number from 0 to 1, got ${JSON.stringify(env.OWNER_SHARE)}`);
  if (cfg.databaseUrl && !cfg.secretKey) {
    throw new ConfigError('SECRET_KEY is required when DATABASE_URL is set (several nodes must share one key)');
  }
  return cfg;
}
