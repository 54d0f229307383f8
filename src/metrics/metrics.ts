// The hub's Prometheus metrics: one registry per hub (tests build several
// hubs in one process, so never prom-client's global registry). What is
// counted per request, message or delta goes into plain counters
// (http-requests.ts, plain.ts) that build their samples at scrape time; the
// rest observes through prom-client label children bound once. Anything that
// needs a lookup (hosts, queue depth, pool, Redis) is read when /metrics is
// scraped, through the sources set by buildHub.
// Labels are low-cardinality by construction: route templates, methods from a
// fixed set, status codes, outcomes from a fixed set — never an id.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpRequestMetrics } from './http-requests.js';
import { PlainCounter, PlainHistogram, PlainHistogramFamily } from './plain.js';

/** Read at scrape time; each may be left unset (its metric then reads 0). */
export interface MetricSources {
  hosts?(): Promise<{ connected: number; online: number; busy: number }>;
  runsRunning?(): number;
  queueDepth?(): Promise<number>;
  streamsOpen?(): number;
  /** Bytes this node's replay rings take (RINGS_MAX_BYTES at most). */
  ringBytes?(): number;
  /** Connections of the database pool in use / free / waited for. */
  pool?(): { used: number; free: number; pending: number } | undefined;
  /** One Redis round trip (seconds); unset on the in-process bus. */
  redisPing?(): Promise<number> | undefined;
  /** Bus publishes dropped since start (Redis unreachable too long, or not keeping up); unset on the in-process bus. */
  busDropped?(): number;
}

/** The label for a request that matched no route: never the raw URL. */
export const UNMATCHED_ROUTE = '(unmatched)';
const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);
const OUTCOMES = new Set(['completed', 'error', 'failed', 'aborted', 'cancelled']);
/** Seconds: from a fraction of a millisecond (a delta) to a slow database call. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Seconds, finer below 10 ms: the stages of a message's path, each a fraction of its latency. */
const FINE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

export class HubMetrics {
  readonly registry = new Registry();
  sources: MetricSources = {};

  /** Requests answered and their latency: counted on every request, so not through prom-client's children. */
  private readonly http = new HttpRequestMetrics(this.registry, LATENCY_BUCKETS);

  // Counted per message or per delta: plain counters (plain.ts), no prom-client child per call.
  private readonly runsStarted = new PlainCounter(this.registry, 'hub_runs_started_total', 'Runs sent to a host (run.start)');
  private readonly runsEnded = new Counter({ name: 'hub_runs_ended_total', help: 'Runs whose end was written, by outcome', labelNames: ['outcome'] as const, registers: [this.registry] });
  private readonly endedChildren = new Map<string, { inc(): void }>();
  /** Message accepted (hub_accept committed) → run.start sent to the host. */
  readonly dispatchSeconds = new PlainHistogram(this.registry, 'hub_dispatch_latency_seconds', 'From a message accepted with its run claimed to run.start sent', LATENCY_BUCKETS);
  /** Host run.delta frame received → written to an SSE stream. */
  readonly deltaSeconds = new PlainHistogram(this.registry, 'hub_delta_latency_seconds', 'From a run.delta frame received from a host to its SSE write', LATENCY_BUCKETS);
  readonly busPublished = new PlainCounter(this.registry, 'hub_bus_published_total', 'Messages published on the bus');
  readonly busReceived = new PlainCounter(this.registry, 'hub_bus_received_total', 'Messages delivered to a bus subscriber');
  private readonly dbCall = new Histogram({ name: 'hub_db_call_duration_seconds', help: 'Duration of the message-path database functions', labelNames: ['function'] as const, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  readonly dbAccept = this.dbCall.labels('hub_accept');
  readonly dbEndRuns = this.dbCall.labels('hub_end_runs');
  /**
   * Per item of a group commit (sessions/group.ts), a message's accept or a run's end: waiting for its
   * batch's call (a call in flight, the linger) and the call that wrote it. Where a message's time
   * before its run.start goes, weighted by messages, not calls.
   */
  private readonly groupCommit = new PlainHistogramFamily(this.registry, 'hub_group_commit_seconds',
    'Per message accepted or run end written: waiting for its batch (stage wait) and its batch\'s database call (stage write)', FINE_BUCKETS);
  readonly acceptBatch = this.stages('accept');
  readonly runEndBatch = this.stages('end');

  /** A group commit's observer: each item's wait and write into hub_group_commit_seconds{group}. */
  private stages(group: string): (waitSeconds: number, writeSeconds: number) => void {
    const wait = this.groupCommit.child({ group, stage: 'wait' });
    const write = this.groupCommit.child({ group, stage: 'write' });
    return (w, s) => {
      wait.observe(w);
      write.observe(s);
    };
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const src = () => this.sources;
    const reg = [this.registry];
    new Gauge({ name: 'hub_hosts', help: 'Host channels held by this node: connected (open sockets), online and busy (said hello)', labelNames: ['state'] as const, registers: reg,
      async collect() {
        const h = (await src().hosts?.().catch(() => undefined)) ?? { connected: 0, online: 0, busy: 0 };
        this.labels('connected').set(h.connected);
        this.labels('online').set(h.online);
        this.labels('busy').set(h.busy);
      } });
    new Gauge({ name: 'hub_runs_running', help: 'Runs this node holds that have not ended', registers: reg, collect() { this.set(src().runsRunning?.() ?? 0); } });
    new Gauge({ name: 'hub_queue_depth', help: 'Messages waiting for their host (all nodes)', registers: reg,
      async collect() { this.set((await src().queueDepth?.().catch(() => undefined)) ?? 0); } });
    new Gauge({ name: 'hub_sse_streams_open', help: 'SSE streams open on this node', registers: reg, collect() { this.set(src().streamsOpen?.() ?? 0); } });
    new Gauge({ name: 'hub_session_ring_bytes', help: 'Bytes of session events this node keeps for Last-Event-ID resumes (bounded by RINGS_MAX_BYTES)', registers: reg, collect() { this.set(src().ringBytes?.() ?? 0); } });
    new Gauge({ name: 'hub_db_pool_connections', help: 'Database pool connections by state', labelNames: ['state'] as const, registers: reg,
      collect() {
        const p = src().pool?.() ?? { used: 0, free: 0, pending: 0 };
        this.labels('used').set(p.used);
        this.labels('free').set(p.free);
        this.labels('pending').set(p.pending);
      } });
    let dropped = 0;
    new Counter({ name: 'hub_bus_publishes_dropped_total', help: 'Bus publishes dropped: Redis unreachable for longer than they are held, or not reading them fast enough (every node is then told to resynchronise)', registers: reg,
      collect() {
        const now = src().busDropped?.() ?? 0;
        if (now > dropped) this.inc(now - dropped);
        dropped = now;
      } });
    new Gauge({ name: 'hub_redis_roundtrip_seconds', help: 'One Redis PING measured at scrape time (0 on the in-process bus or when Redis does not answer)', registers: reg,
      async collect() {
        const s = await Promise.resolve(src().redisPing?.()).catch(() => undefined);
        this.set(s ?? 0);
      } });
  }

  /** One answered request (called by the request wrapper). */
  request(route: string | undefined, method: string, status: number, seconds: number): void {
    this.http.observe(route ?? UNMATCHED_ROUTE, METHODS.has(method) ? method : 'OTHER', status, seconds);
  }

  runStarted(): void {
    this.runsStarted.inc();
  }

  runEnded(outcome: string): void {
    const o = OUTCOMES.has(outcome) ? outcome : 'other';
    let c = this.endedChildren.get(o);
    if (!c) this.endedChildren.set(o, (c = this.runsEnded.labels(o)));
    c.inc();
  }

  /** Times one call of a message-path database function. */
  async timeDb<T>(which: { observe(v: number): void }, call: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await call();
    } finally {
      which.observe((performance.now() - t0) / 1000);
    }
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
