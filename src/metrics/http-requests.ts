// hub_http_requests_total and hub_http_request_duration_seconds, counted the
// cheap way. prom-client's labelled children hash their labels on every
// inc/observe; here a request costs three map lookups and a few additions,
// and the Prometheus samples are built only when /metrics is scraped. The
// object is registered in the hub's registry like any prom-client metric
// (name, help, type, get, reset), so the exposition is prom-client's own.
import type { Registry } from 'prom-client';
import { histogramSamples, newCell, observeInto, registerScraped, type HistogramCell } from './plain.js';

interface Cell extends HistogramCell {
  labels: { route: string; method: string; status: string };
}

const COUNT_HELP = 'HTTP requests answered, by route template, method and status';
const DURATION_HELP = 'Time from request to answer (to the stream opening for SSE)';

export class HttpRequestMetrics {
  /** route → method → status → its cell (the set is bounded by the route table). */
  private readonly cells = new Map<string, Map<string, Map<number, Cell>>>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const reset = () => this.cells.clear();
    registerScraped(registry, 'hub_http_requests_total', COUNT_HELP, 'counter', () => [...this.all()].map((c) => ({ labels: { ...c.labels }, value: c.count })), reset);
    registerScraped(registry, 'hub_http_request_duration_seconds', DURATION_HELP, 'histogram', () => [...this.all()].flatMap((c) => histogramSamples('hub_http_request_duration_seconds', this.bounds, c, c.labels)), reset);
  }

  /** One answered request; `method` is already one of a fixed set. */
  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.cells.get(route);
    if (!byMethod) this.cells.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let c = byStatus.get(status);
    if (!c) byStatus.set(status, (c = { labels: { route, method, status: String(status) }, ...newCell(this.bounds) }));
    observeInto(c, this.bounds, seconds);
  }

  private *all(): Iterable<Cell> {
    for (const m of this.cells.values()) for (const s of m.values()) yield* s.values();
  }
}
