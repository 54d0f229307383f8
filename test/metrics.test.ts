// Issue 14, part 1: GET /metrics in the Prometheus text format. After a real
// end-to-end run (fake host over the real channel, SSE reader) it shows the
// request counter by route template, runs started/ended, the dispatch and
// delta histograms, the hosts gauges and prom-client's defaults — and no id
// anywhere. It is never rate limited, and METRICS_TOKEN guards it when set.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { apiError } from './helpers/api-error.js';
import { ApiError } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

async function scrape(hub: TestHub = t, headers: Record<string, string> = {}) {
  const r = await fetch(`${hub.url}/metrics`, { headers });
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}

/** A new user with a host on a real channel and a private agent on it. */
async function userWithAgent(name: string) {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity: 2 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name, scope: 'private', hostId, engine: 'claude-code', workDir: '' });
  return { u, hostId, host, c, agent };
}

test('after an end-to-end run /metrics shows requests by route template, runs, dispatch and delta latency, hosts, defaults — and no ids', async () => {
  const { u, hostId, host, c, agent } = await userWithAgent('metered');
  assert.equal((await c.agents.manage(agent.id)).id, agent.id);
  // Raw: a path no route (and no client method) has, for the unmatched label.
  assert.equal((await t.api('GET', '/api/v1/no/such/route/usr_abc', { token: u.key })).status, 404);

  const sse = await openSse(`${t.url}/api/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId: agent.id, content: 'count me' }),
  });
  assert.equal(sse.status, 200, sse.text);
  const start = (await host.next((f) => f.t === 'run.start')) as any;
  await sse.until((f) => f.event === 'accepted');
  host.send({ t: 'run.delta', runId: start.runId, text: 'hello ' });
  await sse.until((f) => f.event === 'message.delta');
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 3, outputTokens: 2 } });
  await sse.until((f) => f.event === 'run.completed');
  sse.close();

  const text = await eventually(async () => {
    const m = await scrape();
    return (sample(m.text, 'hub_runs_ended_total', { outcome: 'completed' }) ?? 0) >= 1 ? m : undefined;
  }, 5000, 50);
  assert.equal(text.status, 200);
  assert.match(text.type, /^text\/plain; version=0\.0\.4/);
  const m = text.text;

  // Requests by the registered path, never the raw URL.
  assert.ok((sample(m, 'hub_http_requests_total', { route: '/api/v1/agents/:id/manage', method: 'GET', status: '200' }) ?? 0) >= 1, 'GET /api/v1/agents/:id/manage counted by its template');
  assert.ok((sample(m, 'hub_http_requests_total', { route: '/api/v1/agents', method: 'POST', status: '201' }) ?? 0) >= 1);
  assert.ok((sample(m, 'hub_http_requests_total', { route: '/api/v1/sessions', method: 'POST', status: '200' }) ?? 0) >= 1, 'the SSE request is counted when its stream opens');
  assert.ok((sample(m, 'hub_http_requests_total', { route: '(unmatched)', method: 'GET', status: '404' }) ?? 0) >= 1, 'an unknown route gets the fixed label');
  assert.ok((sample(m, 'hub_http_request_duration_seconds_count', { route: '/api/v1/agents/:id/manage', method: 'GET', status: '200' }) ?? 0) >= 1, 'latency histogram');
  for (const id of ['usr_', 'ses_', 'hst_', 'agt_', 'run_', 'ahk_', agent.id, hostId, u.id]) assert.ok(!m.includes(id), `no id in the output (${id})`);

  // Runs, dispatch and delta latency, hosts.
  assert.ok((sample(m, 'hub_runs_started_total') ?? 0) >= 1, 'runs started');
  assert.ok((sample(m, 'hub_runs_ended_total', { outcome: 'completed' }) ?? 0) >= 1, 'runs ended by outcome');
  assert.equal(sample(m, 'hub_runs_running'), 0, 'nothing running after the end');
  assert.ok((sample(m, 'hub_dispatch_latency_seconds_count') ?? 0) > 0, 'dispatch histogram observed');
  assert.ok((sample(m, 'hub_delta_latency_seconds_count') ?? 0) > 0, 'delta histogram observed');
  assert.equal(sample(m, 'hub_hosts', { state: 'connected' }), 1, 'one host channel on this node');
  assert.equal(sample(m, 'hub_hosts', { state: 'online' }), 1);
  assert.equal(sample(m, 'hub_hosts', { state: 'busy' }), 0);
  assert.equal(sample(m, 'hub_queue_depth'), 0);
  assert.notEqual(sample(m, 'hub_sse_streams_open'), undefined);
  assert.ok((sample(m, 'hub_session_ring_bytes') ?? 0) > 0, 'the finished turn\'s events kept for resumes');
  assert.ok((sample(m, 'hub_db_call_duration_seconds_count', { function: 'hub_accept' }) ?? 0) >= 1, 'hub_accept timed');
  assert.ok((sample(m, 'hub_db_call_duration_seconds_count', { function: 'hub_end_runs' }) ?? 0) >= 1, 'hub_end_runs timed');
  assert.notEqual(sample(m, 'hub_db_pool_connections', { state: 'used' }), undefined);
  assert.ok((sample(m, 'hub_bus_published_total') ?? 0) > 0, 'bus publishes counted');
  assert.ok((sample(m, 'hub_bus_received_total') ?? 0) > 0, 'bus deliveries counted');
  if (t.config.redisUrl) assert.ok((sample(m, 'hub_redis_roundtrip_seconds') ?? -1) >= 0, 'Redis round trip measured');
  assert.equal(sample(m, 'hub_bus_publishes_dropped_total'), 0, 'no bus publish dropped');

  // prom-client's defaults: event-loop lag and process memory.
  assert.notEqual(sample(m, 'nodejs_eventloop_lag_seconds'), undefined);
  assert.ok((sample(m, 'process_resident_memory_bytes') ?? 0) > 0);
  assert.ok((sample(m, 'nodejs_heap_size_used_bytes') ?? 0) > 0);
  host.close();
});

test('a message sent to a session is timed through its group commits: the accept\'s wait and write, the run end\'s', async () => {
  const { host, c, agent } = await userWithAgent('batched');
  const s = (await c.sessions.create({ agentId: agent.id })) as { id: string };
  const count = (m: string, group: string, stage: string) => sample(m, 'hub_group_commit_seconds_count', { group, stage }) ?? 0;
  const before = (await scrape()).text;
  // Through the accept's group commit (a session's first message with its creation is written in the creating transaction).
  await c.sessions.send(s.id, { content: 'timed' });
  const start = (await host.next((f) => f.t === 'run.start')) as any;
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  const m = await eventually(async () => {
    const text = (await scrape()).text;
    return count(text, 'end', 'write') > count(before, 'end', 'write') ? text : undefined;
  }, 5000, 50);
  for (const [group, stage] of [['accept', 'wait'], ['accept', 'write'], ['end', 'wait'], ['end', 'write']]) {
    assert.equal(count(m, group, stage) - count(before, group, stage), 1, `${group} ${stage}: one item observed`);
  }
  assert.ok((sample(m, 'hub_group_commit_seconds_sum', { group: 'accept', stage: 'write' }) ?? 0) > 0, 'the accept call took time');
  assert.equal(sample(m, 'hub_group_commit_seconds_bucket', { group: 'accept', stage: 'wait', le: '+Inf' }), count(m, 'accept', 'wait'));
  host.close();
});

test('/metrics is not rate limited: a hub allowing one request a minute serves it again and again', async () => {
  const strict = await startTestHub({ rateLimitPerMinute: 1, rateLimitPerIpPerMinute: 1 });
  try {
    const anon = strict.client();
    // The first request passes the limiter (a 503 of a degraded node would have passed it too).
    await anon.health().catch((e) => assert.ok(e instanceof ApiError && e.status !== 429, `the first request passes: ${e}`));
    await assert.rejects(anon.health(), apiError(429), 'the limit is in force');
    for (let i = 0; i < 5; i++) {
      const r = await scrape(strict);
      assert.equal(r.status, 200, `scrape ${i}`);
      assert.ok(r.text.includes('hub_http_requests_total'));
    }
    const m = (await scrape(strict)).text;
    assert.ok((sample(m, 'hub_http_requests_total', { route: '/metrics', method: 'GET', status: '200' }) ?? 0) >= 5);
  } finally {
    await strict.close();
  }
});

test('METRICS_TOKEN: /metrics wants the bearer token when set', async () => {
  const guarded = await startTestHub({ metricsToken: 'scrape-secret' });
  try {
    assert.equal((await scrape(guarded)).status, 401, 'no token');
    assert.equal((await scrape(guarded, { authorization: 'Bearer wrong' })).status, 401, 'wrong token');
    const ok = await scrape(guarded, { authorization: 'Bearer scrape-secret' });
    assert.equal(ok.status, 200);
    assert.ok(ok.text.includes('hub_runs_started_total'));
  } finally {
    await guarded.close();
  }
});

test('METRICS_TOKEN guesses are failed credential checks: past the budget the address is refused 429', async () => {
  // A wrong token was answered 401 as often as asked: a short METRICS_TOKEN could be guessed at line rate.
  const guarded = await startTestHub({ metricsToken: 'scrape-secret', authFailuresPerIpPerMinute: 3 });
  try {
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push((await scrape(guarded, { authorization: `Bearer guess-${i}` })).status);
    assert.deepEqual(seen, [401, 401, 401, 429, 429]);
    assert.equal((await scrape(guarded, { authorization: 'Bearer scrape-secret' })).status, 429, 'the address waits out its window, right token or not');
  } finally {
    await guarded.close();
  }
});
