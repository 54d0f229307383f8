// The per-request HTTP metrics (src/metrics/http-requests.ts) expose what
// prom-client's own counter and histogram would: cumulative buckets, +Inf,
// _sum and _count per route, method and status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { HttpRequestMetrics } from '../src/metrics/http-requests.js';
import { PlainCounter, PlainHistogram } from '../src/metrics/plain.js';

test('counts, cumulative buckets, sum and count per label set; reset empties', async () => {
  const registry = new Registry();
  const m = new HttpRequestMetrics(registry, [0.001, 0.01, 0.1]);
  m.observe('/api/v1/agents', 'GET', 200, 0.0005);
  m.observe('/api/v1/agents', 'GET', 200, 0.001); // on a bound: counted in it (le)
  m.observe('/api/v1/agents', 'GET', 200, 0.05);
  m.observe('/api/v1/agents', 'GET', 200, 3);
  m.observe('/api/v1/agents', 'GET', 404, 0.002);
  const text = await registry.metrics();
  const at = (line: string) => assert.ok(text.includes(line), `missing: ${line}\n${text}`);
  at('# TYPE hub_http_requests_total counter');
  at('hub_http_requests_total{route="/api/v1/agents",method="GET",status="200"} 4');
  at('hub_http_requests_total{route="/api/v1/agents",method="GET",status="404"} 1');
  at('# TYPE hub_http_request_duration_seconds histogram');
  at('hub_http_request_duration_seconds_bucket{le="0.001",route="/api/v1/agents",method="GET",status="200"} 2');
  at('hub_http_request_duration_seconds_bucket{le="0.01",route="/api/v1/agents",method="GET",status="200"} 2');
  at('hub_http_request_duration_seconds_bucket{le="0.1",route="/api/v1/agents",method="GET",status="200"} 3');
  at('hub_http_request_duration_seconds_bucket{le="+Inf",route="/api/v1/agents",method="GET",status="200"} 4');
  at('hub_http_request_duration_seconds_sum{route="/api/v1/agents",method="GET",status="200"} 3.0515');
  at('hub_http_request_duration_seconds_count{route="/api/v1/agents",method="GET",status="404"} 1');
  registry.resetMetrics();
  assert.ok(!(await registry.metrics()).includes('status="200"'));
});

test('plain histogram and counter (the per-delta and per-message metrics) expose what prom-client would; reset empties', async () => {
  const registry = new Registry();
  const h = new PlainHistogram(registry, 'hub_test_latency_seconds', 'a test histogram', [0.001, 0.01]);
  const c = new PlainCounter(registry, 'hub_test_total', 'a test counter');
  h.observe(0.0002);
  h.observe(0.01); // on a bound: counted in it (le)
  h.observe(2);
  c.inc();
  c.inc(4);
  const text = await registry.metrics();
  const at = (line: string) => assert.ok(text.includes(line), `missing: ${line}\n${text}`);
  at('# TYPE hub_test_latency_seconds histogram');
  at('hub_test_latency_seconds_bucket{le="0.001"} 1');
  at('hub_test_latency_seconds_bucket{le="0.01"} 2');
  at('hub_test_latency_seconds_bucket{le="+Inf"} 3');
  at('hub_test_latency_seconds_sum 2.0102');
  at('hub_test_latency_seconds_count 3');
  at('# TYPE hub_test_total counter');
  at('hub_test_total 5');
  registry.resetMetrics();
  const after = await registry.metrics();
  assert.ok(after.includes('hub_test_latency_seconds_count 0') && after.includes('hub_test_total 0'), after);
});
