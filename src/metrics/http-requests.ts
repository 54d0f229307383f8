// hub_http_requests_total and hub_http_request_duration_seconds, counted the
// cheap way. prom-client's labelled children hash their labels on every
// inc/observe; here a request costs three map lookups and a few additions,
// and the Prometheus samples are built only when /metrics is scraped. The
// object is registered in the hub's registry like any prom-client metric
// (name, help, type, get, reset), so the exposition is prom-client's own.
import type { Registry } from 'prom-client';

interface Cell {
  labels: { route: string; method: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is past the largest bound. */
  buckets: Float64Array;
}

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

export class HttpRequestMetrics {
  /** route → method → status → its cell (the set is bounded by the route table). */
  private readonly cells = new Map<string, Map<string, Map<number, Cell>>>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const self = this;
    registry.registerMetric({
      name: 'hub_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({ name: 'hub_http_requests_total', help: 'HTTP requests answered, by route template, method and status', type: 'counter', aggregator: 'sum', values: self.counts() }),
      reset: () => self.cells.clear(),
    } as never);
    registry.registerMetric({
      name: 'hub_http_request_duration_seconds',
      help: 'Time from request to answer (to the stream opening for SSE)',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ name: 'hub_http_request_duration_seconds', help: 'Time from request to answer (to the stream opening for SSE)', type: 'histogram', aggregator: 'sum', values: self.histogram('hub_http_request_duration_seconds') }),
      reset: () => self.cells.clear(),
    } as never);
  }

  /** One answered request; `method` is already one of a fixed set. */
  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.cells.get(route);
    if (!byMethod) this.cells.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let c = byStatus.get(status);
    if (!c) byStatus.set(status, (c = { labels: { route, method, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) }));
    c.count++;
    c.sum += seconds;
    const b = this.bounds;
    let i = 0;
    while (i < b.length && seconds > b[i]) i++;
    c.buckets[i]++;
  }

  private *all(): Iterable<Cell> {
    for (const m of this.cells.values()) for (const s of m.values()) yield* s.values();
  }

  private counts(): Sample[] {
    return [...this.all()].map((c) => ({ labels: { ...c.labels }, value: c.count }));
  }

  private histogram(name: string): Sample[] {
    const out: Sample[] = [];
    for (const c of this.all()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += c.buckets[i];
        out.push({ labels: { le, ...c.labels }, value: acc, metricName: `${name}_bucket` });
      });
      out.push({ labels: { le: '+Inf', ...c.labels }, value: c.count, metricName: `${name}_bucket` });
      out.push({ labels: { ...c.labels }, value: c.sum, metricName: `${name}_sum` });
      out.push({ labels: { ...c.labels }, value: c.count, metricName: `${name}_count` });
    }
    return out;
  }
}
