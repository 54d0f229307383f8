// Unlabelled counters and histograms for the per-delta and per-message paths,
// counted the cheap way (as http-requests.ts counts requests): prom-client's
// Histogram.observe allocates a closure and a label object per call, which at
// 100,000 deltas/s is garbage the event loop pays for. Here an observation is
// a few additions; Prometheus samples are built only when /metrics is scraped,
// and the object is registered in the hub's registry like any prom-client
// metric, so the exposition is prom-client's own.
import type { Registry } from 'prom-client';

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/** One label set's histogram state: observations per bucket (not cumulative; the last slot is past the largest bound). */
export interface HistogramCell {
  count: number;
  sum: number;
  buckets: Float64Array;
}

export function newCell(bounds: readonly number[]): HistogramCell {
  return { count: 0, sum: 0, buckets: new Float64Array(bounds.length + 1) };
}

/** Counts `v` into the cell: a value on a bound is counted in it (Prometheus' `le`). */
export function observeInto(cell: HistogramCell, bounds: readonly number[], v: number): void {
  cell.count++;
  cell.sum += v;
  let i = 0;
  while (i < bounds.length && v > bounds[i]) i++;
  cell.buckets[i]++;
}

/** The cell's samples as prom-client exposes a histogram: cumulative buckets, +Inf, _sum and _count. */
export function histogramSamples(name: string, bounds: readonly number[], cell: HistogramCell, labels: Record<string, string> = {}): Sample[] {
  const out: Sample[] = [];
  let acc = 0;
  bounds.forEach((le, i) => {
    acc += cell.buckets[i];
    out.push({ labels: { le, ...labels }, value: acc, metricName: `${name}_bucket` });
  });
  out.push({ labels: { le: '+Inf', ...labels }, value: cell.count, metricName: `${name}_bucket` });
  out.push({ labels: { ...labels }, value: cell.sum, metricName: `${name}_sum` });
  out.push({ labels: { ...labels }, value: cell.count, metricName: `${name}_count` });
  return out;
}

/** Registers a metric whose samples are read at scrape time. */
export function registerScraped(registry: Registry, name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[], reset: () => void): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset,
  } as never);
}

export class PlainHistogram {
  private cell: HistogramCell;

  constructor(registry: Registry, name: string, help: string, private readonly bounds: readonly number[]) {
    this.cell = newCell(bounds);
    registerScraped(registry, name, help, 'histogram', () => histogramSamples(name, this.bounds, this.cell), () => (this.cell = newCell(this.bounds)));
  }

  observe(v: number): void {
    observeInto(this.cell, this.bounds, v);
  }
}

export class PlainCounter {
  private value = 0;

  constructor(registry: Registry, name: string, help: string) {
    registerScraped(registry, name, help, 'counter', () => [{ labels: {}, value: this.value }], () => (this.value = 0));
  }

  inc(n = 1): void {
    this.value += n;
  }
}

/**
 * A histogram with labels whose sets are bound once (`child`, at construction of the caller), each
 * observed the cheap way; one metric, a series per label set.
 */
export class PlainHistogramFamily {
  private cells: Array<{ labels: Record<string, string>; cell: HistogramCell }> = [];

  constructor(registry: Registry, name: string, help: string, private readonly bounds: readonly number[]) {
    registerScraped(registry, name, help, 'histogram', () => this.cells.flatMap((c) => histogramSamples(name, this.bounds, c.cell, c.labels)),
      () => { for (const c of this.cells) c.cell = newCell(this.bounds); });
  }

  child(labels: Record<string, string>): { observe(v: number): void } {
    const entry = { labels, cell: newCell(this.bounds) };
    this.cells.push(entry);
    return { observe: (v) => observeInto(entry.cell, this.bounds, v) };
  }
}
