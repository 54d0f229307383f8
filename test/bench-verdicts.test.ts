// bench/verdicts.ts: each bench module answers issue 15's targets as its own table words them —
// met, NOT met, or no verdict where its baseline was saturated — and `npm run bench` ends with all
// of them in one table. The rules here are the modules' own, fed with figures of both kinds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verdictsOf, verdictsTable, type Verdict } from '../bench/verdicts.js';
import { verdictsOf as dispatchVerdicts, type DispatchFigure, type DeltaFigure } from '../bench/dispatch.js';
import { crossTarget, type Figure } from '../bench/cross-node.js';
import { clusterVerdicts, type ClusterResult, type NodeFigure } from '../bench/hosts-cluster.js';
import { readVerdicts } from '../bench/http.js';
import { startupVerdicts } from '../bench/startup.js';

const by = (vs: Verdict[], part: string) => {
  const v = vs.find((x) => x.target.includes(part));
  assert.ok(v, `a verdict on "${part}" among ${vs.map((x) => x.target).join('; ')}`);
  return v;
};

test('the suite\'s table: one row per verdict, its module beside it, a missed one in bold, and the counts', () => {
  const lines = verdictsTable([
    { target: '1. a', outcome: 'met', figure: '70 %', module: 'http' },
    { target: '3. b', outcome: 'NOT met', figure: '2.2×', module: 'dispatch' },
    { target: '5. c', outcome: 'no verdict', figure: 'saturated', module: 'cross-node' },
  ]);
  assert.equal(lines[2], '| 1. a | met | 70 % | http |');
  assert.equal(lines[3], '| 3. b | **NOT met** | 2.2× | dispatch |');
  assert.match(lines.at(-1)!, /^1 met, 1 not met, 1 without a verdict/);
  assert.deepEqual(verdictsTable([]), []);
  assert.deepEqual(verdictsOf(undefined), []);
  assert.deepEqual(verdictsOf('a string module result'), []);
  assert.equal(verdictsOf({ verdicts: [{ target: 't', outcome: 'met', figure: 'f' }] }).length, 1);
});

test('target 1: each signed-in read against the bare endpoint and against the peer', () => {
  const vs = readVerdicts('GET /agents/{id}', 0.34, 6);
  assert.equal(by(vs, 'bare').outcome, 'NOT met');
  assert.equal(by(vs, 'bare').figure, '34.0 %');
  assert.equal(by(vs, 'peer').outcome, 'met');
  assert.equal(by(readVerdicts('x', 0.7, 4.9), 'peer').outcome, 'NOT met');
  assert.equal(by(readVerdicts('x', 0.7, undefined), 'peer').outcome, 'no verdict', 'no peer on the embedded database');
});

test('targets 2 and 3 per rate: a saturated baseline or a load not sent gives no verdict, not a miss', () => {
  const lat = (p99: number) => ({ p50: 1, p99, max: p99 });
  const disp = (p99: number, over: Partial<DispatchFigure> = {}): DispatchFigure => ({ rate: 500, sent: 100, accepted: 100, queued: 0, errors: 0, dispatched: 100, messagesPerSecond: 500, latency: lat(p99), ...over });
  const loop = { p99: 1, max: 1 };
  const delta = (p99: number, over: Partial<DeltaFigure> = {}): DeltaFigure => ({ sent: 100, received: 100, rate: 10_000, latency: lat(p99), loop: { producer: loop, reader: loop }, ...over });
  const vs = dispatchVerdicts({
    dispatch: [
      { rate: 500, hub: disp(5), relay: disp(3), rounds: [] },
      { rate: 2000, hub: disp(9, { accepted: 98 }), relay: disp(4), rounds: [] },
      { rate: 4000, hub: disp(40), relay: disp(12), rounds: [] },
    ],
    deltas: [
      { rate: 10_000, hub: delta(1.4), fanout: delta(1), rounds: [] },
      { rate: 20_000, hub: delta(2.6, { rate: 20_000 }), fanout: delta(1.1, { rate: 20_000 }), rounds: [] },
      { rate: 50_000, hub: delta(30, { rate: 50_000 }), fanout: delta(12, { rate: 50_000 }), rounds: [] },
      { rate: 100_000, hub: delta(3, { rate: 80_000 }), fanout: delta(2, { rate: 100_000 }), rounds: [] },
    ],
  });
  assert.equal(by(vs, '500 msg/s: p99').outcome, 'met');
  assert.match(by(vs, '500 msg/s: p99').figure, /^1\.67× \(hub 5 ms, relay 3 ms\)/);
  assert.equal(by(vs, '2000 msg/s: p99').outcome, 'NOT met');
  assert.equal(by(vs, '2000 msg/s: ≥ 99 %').outcome, 'NOT met');
  assert.equal(by(vs, '2000 msg/s: ≥ 99 %').figure, '98.0 %');
  assert.equal(by(vs, '4000 msg/s: p99').outcome, 'no verdict');
  assert.match(by(vs, '4000 msg/s: p99').figure, /relay saturated/);
  assert.equal(by(vs, 'deltas at 10000/s').outcome, 'met');
  assert.equal(by(vs, 'deltas at 20000/s').outcome, 'NOT met');
  assert.equal(by(vs, 'deltas at 50000/s').outcome, 'no verdict');
  assert.equal(by(vs, 'deltas at 100000/s').outcome, 'no verdict');
  assert.match(by(vs, 'deltas at 100000/s').figure, /load generator behind/);
  assert.equal(by(dispatchVerdicts({ dispatch: [{ rate: 500, hub: disp(5), rounds: [] }], deltas: [] }), 'p99').outcome, 'no verdict', 'no relay without PostgreSQL');
});

test('target 5: cross − same within 3 ms, unless the same-node baseline is saturated', () => {
  const fig = (p99ms: number, over: Partial<Figure> = {}): Figure => ({ target: 'x', rate: 1000, sent: 100, dispatched: 100, errors: 0, p50ms: 1, p99ms, maxms: p99ms, ...over });
  const r = (same: Figure, cross: Figure) => ({ seconds: 5, hop: [], figures: [same, cross], deltaP99: cross.p99ms - same.p99ms });
  assert.equal(crossTarget(r(fig(5), fig(7))).outcome, 'met');
  assert.equal(crossTarget(r(fig(5), fig(9))).outcome, 'NOT met');
  assert.equal(crossTarget(r(fig(12), fig(30))).outcome, 'no verdict');
  assert.match(crossTarget(r(fig(12), fig(30))).figure, /same-node baseline saturated \(p99 12 ms\)/);
});

test('target 4: connect, memory per node, ping, Redis measured, kills — each judged apart', () => {
  const node = (kbPerChannel: number, newSpaceMB: [number, number]): NodeFigure => ({
    node: 'n', channels: 15_000, rssBeforeMB: 100, rssOpenMB: 100 + (kbPerChannel * 15_000) / 1024, kbPerChannel, heapKbPerChannel: 1,
    heapCommittedMB: [40, 80], newSpaceMB, cpuMsPerS: 70, loopP99ms: 3, fdLimit: 20_000,
  });
  const r = {
    n: 60_000, nodes: 4, clients: 4, heartbeatWindowMs: 15_000, connected: 60_000, failed: 0, errors: [], connectSeconds: 22.7,
    perNode: [node(3.16, [1.26, 30.52]), node(1.1, [28, 31])], pingP50ms: 0.3, pingP99ms: 4.85, pings: 2000,
    connectPhases: { upgrade: { p50: 1, p99: 2 }, hello: { p50: 1, p99: 2 } }, connectCpu: { hubs: 0.3, clients: 0.27, postgres: 0.12, redis: 0.03 },
    steadySeconds: 15, redisCpuMs: 638, redisCpuMsPerSecondPer1000: 0.71, redisCommandsPerHostPerMinute: 36,
    kills: [{ mode: 'terminate', node: 'n', hostId: 'h', offlineMs: 37, perNode: [37] }, { mode: 'silent', node: 'n', hostId: 'h2', offlineMs: 13_157, perNode: [13_157] }],
    loadStart: '', loadEnd: '', stolen: '0 %',
  } satisfies ClusterResult;
  const vs = clusterVerdicts(r);
  assert.equal(by(vs, 'connected in < 20 s').outcome, 'NOT met');
  assert.equal(by(vs, 'KB RSS per channel').outcome, 'NOT met');
  assert.match(by(vs, 'KB RSS per channel').figure, /^worst node 3\.16 KB \(1\.1\d KB with its young generation's growth set apart\)/);
  assert.equal(by(vs, 'ping p99').outcome, 'met');
  assert.equal(by(vs, 'ping p99').figure, '4.85 ms', 'not paced: the back-to-back sample is judged');
  // Paced over a minute: that p99 is judged (every periodic task of a node falls in it), the back-to-back sample beside it.
  const pacedMin = (p99: number) => ({ seconds: 65, pings: 48_000, p50: 0.2, p99, p999: 12.1, max: 54 });
  const bare = { n: 15_000, connected: 15_000, pingP50ms: 0.1, pingP99ms: 1.85, pings: 2000, paced: { ...pacedMin(1.6), pings: 12_000 } };
  const paced = by(clusterVerdicts({ ...r, pingP99ms: 8.96, paced: pacedMin(3.6), bare }), 'ping p99');
  assert.deepEqual([paced.outcome, paced.figure], ['met', 'paced over 65 s: 3.6 ms, p99.9 12.1 ms (the bare floor paced the same way: p99 1.6 ms, 2.25×); 2000 back-to-back pings: 8.96 ms (the bare floor 1.85 ms)']);
  assert.equal(by(clusterVerdicts({ ...r, pingP99ms: 2.1, paced: pacedMin(5.2) }), 'ping p99').outcome, 'NOT met', 'a paced minute over the line misses, whatever the sample');
  // Where the bare floor itself misses an absolute line, the machine could not meet it: no verdict (a failed connect stays the hub's).
  const slowFloor = { ...bare, paced: { ...bare.paced, p99: 37.4 } };
  const slow = by(clusterVerdicts({ ...r, paced: pacedMin(53.4), bare: slowFloor }), 'ping p99');
  assert.equal(slow.outcome, 'no verdict');
  assert.match(slow.figure, /^the bare floor missed it too: the machine, not the hub; paced over 65 s: 53\.4 ms/);
  const floorConnect = (seconds: number) => ({ n: 60_000, connected: 60_000, seconds, phases: r.connectPhases, cpu: { servers: 0.2, clients: 0.5 } });
  assert.equal(by(clusterVerdicts({ ...r, connectSeconds: 65.7, bareConnect: floorConnect(22.6) }), 'connected in').outcome, 'no verdict');
  assert.equal(by(clusterVerdicts({ ...r, connectSeconds: 65.7, bareConnect: floorConnect(8.1) }), 'connected in').outcome, 'NOT met');
  assert.equal(by(clusterVerdicts({ ...r, connectSeconds: 65.7, connected: 59_999, bareConnect: floorConnect(22.6) }), 'connected in').outcome, 'NOT met', 'a host that failed is the hub\'s');
  assert.equal(by(clusterVerdicts({ ...r, connectSeconds: 19.2, bareConnect: floorConnect(22.6) }), 'connected in').outcome, 'met');
  assert.equal(by(vs, 'Redis CPU').outcome, 'met');
  assert.equal(by(vs, 'killed host').outcome, 'met');
  assert.equal(by(clusterVerdicts({ ...r, kills: [{ mode: 'silent', node: 'n', hostId: 'h', offlineMs: NaN, perNode: [NaN] }] }), 'killed host').outcome, 'NOT met', 'a host never read offline');
  assert.equal(by(clusterVerdicts({ ...r, connectSeconds: 14, connected: 59_999 }), 'connected in').outcome, 'NOT met', 'one host not connected');
});

test('target 6: each start against its line; no RSS verdict without PostgreSQL', () => {
  const s = (seconds: number, rssMb = 140) => ({ seconds, cpuSeconds: 1, rssMb, origin: 'x' });
  const vs = startupVerdicts([s(2.4), s(2.5), s(6)], [s(1.5), s(2.1), s(2.2)], [s(0.9, 140), s(0.9, 151), s(0.9, 152)]);
  assert.equal(by(vs, 'first start').outcome, 'met');
  assert.equal(by(vs, 'first start').figure, '2.50 s (median of 3)');
  assert.equal(by(vs, 'restart').outcome, 'NOT met');
  assert.equal(by(vs, 'RSS').outcome, 'NOT met');
  assert.equal(by(startupVerdicts([s(1)], [s(1)], []), 'RSS').outcome, 'no verdict');
  assert.equal(by(startupVerdicts([], [], []), 'first start').outcome, 'no verdict', 'STARTUP_RUNS=0');
});
