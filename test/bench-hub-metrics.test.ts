// bench/hub-metrics.ts reads what bench/RESULTS.md then says of the hub's
// stages: its parse of the hub's own exposition, the difference of two
// readings, and the quantiles it estimates from buckets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HubMetrics } from '../src/metrics/metrics.js';
import { parseHistograms, gained, quantile, stagesLine, dbCallsLine } from '../bench/hub-metrics.js';

test('the stages of POST → run.start, read from two scrapes of the hub\'s metrics', async () => {
  const m = new HubMetrics();
  m.acceptBatch(0.5, 0.5); // before the phase: left out by the difference
  m.dispatchSeconds.observe(1);
  const a = parseHistograms(await m.registry.metrics());
  for (let i = 0; i < 100; i++) {
    m.acceptBatch(0.0004, i < 99 ? 0.0009 : 0.02); // one slow call in a hundred
    m.dispatchSeconds.observe(0.0001);
    m.dbAccept.observe(0.001);
  }
  const b = parseHistograms(await m.registry.metrics());

  const write = gained(a, b, 'hub_group_commit_seconds{group="accept",stage="write"}');
  assert.equal(write.count, 100);
  assert.ok(Math.abs(write.sum - (99 * 0.0009 + 0.02)) < 1e-9);
  assert.ok(quantile(write, 0.5) > 0.0005 && quantile(write, 0.5) <= 0.001, `median within its bucket: ${quantile(write, 0.5)}`);
  assert.ok(quantile(write, 0.995) > 0.01 && quantile(write, 0.995) <= 0.025, `the slow call's bucket: ${quantile(write, 0.995)}`);
  assert.equal(quantile({ count: 0, sum: 0, buckets: [] }, 0.99), NaN);

  const line = stagesLine(a, b, 2.5)!;
  assert.match(line, /^waiting for an accept batch 0\.40 ms/);
  assert.match(line, /the accept call 1\.09 ms/);
  assert.match(line, /accepted → run\.start sent 0\.10 ms/);
  assert.match(line, /the rest 0\.91 ms, of a mean POST → run\.start of 2\.50 ms$/, 'no requests and no run ends observed: neither reported');
  assert.equal(stagesLine(b, b, 1), undefined, 'nothing observed in the phase');

  // With the requests' own durations (arrival → 202): the rest split into the hub's part and the outside.
  for (let i = 0; i < 100; i++) m.request('/api/v1/sessions/:id/messages', 'POST', 202, 0.002);
  m.request('/api/v1/sessions/:id/messages', 'POST', 404, 1); // not a message accepted
  const c = parseHistograms(await m.registry.metrics());
  assert.match(stagesLine(a, c, 2.5)!, /the rest 0\.91 ms \(in the hub, its HTTP handling and checks 0\.41 ms; outside it, the sockets and the load generator 0\.50 ms\)/);
  assert.equal(dbCallsLine(a, b, 50), 'hub_accept 2.000 calls/msg, 1.00 ms/call');
});
