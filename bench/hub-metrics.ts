// The hub's own account of a bench phase, from its /metrics read before and
// after: its message-path database calls (hub_db_call_duration_seconds) and
// where a message's POST → run.start went (hub_group_commit_seconds: waiting
// for an accept batch, the accept call; hub_dispatch_latency_seconds: accepted
// → run.start sent). What explains a dispatch latency beside its baseline,
// in every run (issue 15: "the profile that explains it").

/** One histogram series: count, sum and cumulative buckets by upper bound. */
export interface Hist {
  count: number;
  sum: number;
  buckets: Array<[number, number]>;
}

/** Histogram series by `name{labels}` (labels sorted, `le` left out). */
export type Snapshot = Map<string, Hist>;

const key = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels).filter((k) => k !== 'le').sort().map((k) => `${k}="${labels[k]}"`).join(',')}}`;

/** The histogram series of a Prometheus text exposition. */
export function parseHistograms(text: string): Snapshot {
  const out: Snapshot = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)_(bucket|sum|count)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    const k = key(m[1]!, labels);
    const h = out.get(k) ?? { count: 0, sum: 0, buckets: [] };
    const v = Number(m[4]);
    if (m[2] === 'count') h.count = v;
    else if (m[2] === 'sum') h.sum = v;
    else h.buckets.push([labels.le === '+Inf' ? Infinity : Number(labels.le), v]);
    out.set(k, h);
  }
  return out;
}

export async function scrapeHub(url: string): Promise<Snapshot> {
  return parseHistograms(await (await fetch(`${url}/metrics`)).text());
}

/** What a series gained between two snapshots. */
export function gained(a: Snapshot, b: Snapshot, series: string): Hist {
  const x = a.get(series), y = b.get(series);
  if (!y) return { count: 0, sum: 0, buckets: [] };
  return {
    count: y.count - (x?.count ?? 0),
    sum: y.sum - (x?.sum ?? 0),
    buckets: y.buckets.map(([le, n], i) => [le, n - (x?.buckets[i]?.[1] ?? 0)]),
  };
}

/** The q-quantile, interpolated within its bucket as Prometheus' histogram_quantile does (the largest finite bound past the last). */
export function quantile(h: Hist, q: number): number {
  if (!h.count) return NaN;
  const rank = q * h.count;
  let lo = 0, below = 0;
  for (const [le, n] of h.buckets) {
    if (n >= rank) return le === Infinity ? lo : lo + (le - lo) * ((rank - below) / Math.max(n - below, 1e-9));
    if (le !== Infinity) lo = le;
    below = n;
  }
  return lo;
}

const ms = (s: number) => (Number.isFinite(s) ? (s * 1000).toFixed(2) : 'n/a');

/** Calls per message and mean ms per call in a phase, by function. */
export function dbCallsLine(a: Snapshot, b: Snapshot, sent: number): string {
  const fns = [...b.keys()].filter((k) => k.startsWith('hub_db_call_duration_seconds{')).sort();
  return fns.map((k) => {
    const g = gained(a, b, k);
    const fn = /function="([^"]+)"/.exec(k)?.[1] ?? k;
    return `${fn} ${(g.count / sent).toFixed(3)} calls/msg, ${g.count ? ms(g.sum / g.count) : '-'} ms/call`;
  }).join('; ');
}

/**
 * Where the hub's POST → run.start went in a phase, per message (means; p99 from the hub's buckets):
 * the accept's wait for a batch and its call, accepted → run.start sent, and the rest of the mean the
 * bench measured: the hub's HTTP handling and checks (its request duration less those stages) and
 * what lies outside the hub (the sockets both ways, the load generator's event loop). Undefined when
 * the hub observed nothing.
 */
export function stagesLine(a: Snapshot, b: Snapshot, meanMs: number): string | undefined {
  const stage = (group: string, s: string) => gained(a, b, `hub_group_commit_seconds{group="${group}",stage="${s}"}`);
  const wait = stage('accept', 'wait'), write = stage('accept', 'write');
  const sent = gained(a, b, 'hub_dispatch_latency_seconds{}');
  if (!wait.count || !sent.count) return undefined;
  const mean = (h: Hist) => h.sum / h.count;
  const part = (h: Hist) => `${ms(mean(h))} ms (p99 ≈ ${ms(quantile(h, 0.99))})`;
  const rest = meanMs / 1000 - mean(wait) - mean(write) - mean(sent);
  // The request's own duration (arrival → 202 written, after its run.start) splits the rest: the hub's HTTP and checks, and outside it.
  const http = gained(a, b, 'hub_http_request_duration_seconds{method="POST",route="/api/v1/sessions/:id/messages",status="202"}');
  const inHub = http.count ? mean(http) - mean(wait) - mean(write) - mean(sent) : NaN;
  const split = http.count ? ` (in the hub, its HTTP handling and checks ${ms(inHub)} ms; outside it, the sockets and the load generator ${ms(rest - inHub)} ms)` : '';
  const endWait = stage('end', 'wait'), endWrite = stage('end', 'write');
  return `waiting for an accept batch ${part(wait)}, the accept call ${part(write)}, accepted → run.start sent ${part(sent)}, `
    + `the rest ${ms(rest)} ms${split}, of a mean POST → run.start of ${meanMs.toFixed(2)} ms`
    + (endWrite.count ? `; run ends, off that path: waiting for a batch ${part(endWait)}, the call ${part(endWrite)}` : '');
}
