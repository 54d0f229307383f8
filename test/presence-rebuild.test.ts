// Issue 14 (b): after Redis restarts empty, a node writes the presence of the
// hosts whose channel it holds again as soon as its connections are back
// (the bus's reconnect), not at its next channel sweep, and retries until the
// write goes through. The heartbeat window here is ten minutes, so the sweep
// (every third of it) cannot be what rebuilds it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { hasRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';
import { testPrefix } from './helpers/redis.js';

const skip = hasRedisServer ? undefined : 'no redis-server binary to start a Redis this test may restart';
let redis: OwnRedis | undefined;
let hub: TestHub | undefined;
let host: FakeHost | undefined;
after(async () => {
  host?.close();
  await hub?.close();
  await redis?.kill();
});

test('presence is written again once the node reconnects to a Redis that restarted empty', { skip }, async () => {
  redis = await ownRedis();
  await redis.start();
  hub = await startTestHub({ redisUrl: redis.url, redisPrefix: testPrefix(), hostHeartbeatTimeoutMs: 600_000 });
  const t = hub;
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: 2 });
  const status = async () => (await t.api('GET', `/api/v1/hosts/${hostId}`, { token: u.key })).body?.data?.status;
  assert.equal(await status(), 'online');

  await redis.kill();
  await eventually(async () => !t.hub.ctx.bus.healthy(), 10_000, 20);
  await redis.start(); // empty: every presence entry and node key is gone
  await eventually(async () => t.hub.ctx.bus.healthy(), 15_000, 20);
  const seen: unknown[] = [];
  await eventually(async () => {
    const s = await status();
    seen.push(s);
    return s === 'online';
  }, 15_000, 100).catch((e) => {
    throw new Error(`${e.message}: the host read ${JSON.stringify([...new Set(seen)])} after the restart`);
  });
  assert.equal(host.ws.readyState, host.ws.OPEN, 'the host kept its channel: nothing reconnected but Redis');
});
