// Frames for a host reach its channel through the node that holds it: one Bus
// topic per node, none per host, and no Bus at all when the sending node holds
// the channel itself. A host's channel costs Redis no
// subscription (a reconnect storm of 60,000 hosts sent 60,000 SUBSCRIBEs and
// each channel held one in the hub's heap); a frame that reaches a node the
// host has just left is routed on to where presence says the host is now.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { redisUrlOrSkip, testPrefix } from './helpers/redis.js';
import { publishObj } from '../src/bus/bus.js';
import { hostsTopic } from '../src/hosts/gateway-impl.js';

const redis = await redisUrlOrSkip();
const skip = 'skip' in redis ? redis.skip : !process.env.DATABASE_URL ? 'DATABASE_URL is not set (two hubs need one shared PostgreSQL)' : undefined;
const redisUrl = 'url' in redis ? redis.url : undefined;

describe('host frames are routed per node', { skip }, () => {
  let a: TestHub;
  let b: TestHub;
  let drop: () => Promise<void>;
  let r: Redis;
  const prefix = testPrefix();
  const hosts: FakeHost[] = [];
  before(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    const shared = { databaseUrl: db.url, redisUrl, redisPrefix: prefix, hostHeartbeatTimeoutMs: 60_000 };
    a = await startTestHub({ ...shared, nodeId: 'node-a' });
    b = await startTestHub({ ...shared, nodeId: 'node-b', adminApiKey: a.adminKey });
    r = new Redis(redisUrl!);
  });
  after(async () => {
    for (const h of hosts) h.close();
    r?.disconnect();
    await a?.close();
    await b?.close();
    await drop?.();
  });

  const channels = async () => ((await r.pubsub('CHANNELS', `${prefix}*`)) as string[]).sort();
  const holder = async (t: TestHub, hostId: string) => (await t.hub.runFrames.gateway.entries([hostId])).get(hostId)?.nodeId;

  test('a host channel costs Redis no subscription; frames and requests reach it from either node', async () => {
    const before = await channels();
    assert.ok(before.includes(`${prefix}${hostsTopic('node-a')}`) && before.includes(`${prefix}${hostsTopic('node-b')}`), 'each node listens on its own topic');
    const u = await a.user();
    const paired = await Promise.all([0, 1, 2].map(() => pairHost(a, u.key)));
    for (const p of paired) hosts.push(await connectFakeHost(a, p.credential));
    for (const p of paired) await eventually(async () => (await holder(b, p.hostId)) === 'node-a', 5000, 20);
    await a.hub.ctx.bus.ready();
    assert.deepEqual(await channels(), before, 'three channels, no new Redis subscription');
    const [one] = paired;
    const fh = hosts.at(-3)!;
    // A frame for a channel the sending node holds goes straight to it: nothing is published.
    const bus = a.hub.ctx.bus;
    const publish = bus.publish.bind(bus);
    const topics: string[] = [];
    // Host frames and replies (`host:<id>` before per-node routing, `hostframes:<node>`, `hostreply:<node>`); other domains may publish meanwhile.
    bus.publish = (topic, payload) => (topic.startsWith('host') && topics.push(topic), publish(topic, payload));
    try {
      await a.hub.runFrames.gateway.send(one.hostId, { t: 'run.abort', runId: 'run_local' });
      await fh.next((f) => f.t === 'run.abort' && f.runId === 'run_local');
      await a.client(u.key).hosts.directories(one.hostId);
    } finally {
      bus.publish = publish;
    }
    assert.deepEqual(topics, [], 'a frame and a request to a channel held here use no Bus round trip');
    for (const [via, runId] of [[a, 'run_fromA'], [b, 'run_fromB']] as const) {
      await via.hub.runFrames.gateway.send(one.hostId, { t: 'run.abort', runId });
      await fh.next((f) => f.t === 'run.abort' && f.runId === runId);
    }
    const seen = fh.frames.length;
    await b.client(u.key).hosts.directories(one.hostId);
    assert.ok(fh.frames.slice(seen).some((f) => f.t === 'dirs.list'), 'a request through B reaches the channel on A and its reply comes back');
  });

  test('a frame that reaches a node the host has left is routed on to its holder', async () => {
    const u = await a.user();
    const { hostId, credential } = await pairHost(a, u.key);
    const onB = await connectFakeHost(b, credential);
    hosts.push(onB);
    await eventually(async () => (await holder(a, hostId)) === 'node-b', 5000, 20);
    // As if a sender had read presence while the host was still on A.
    publishObj(b.hub.ctx.bus, hostsTopic('node-a'), { k: 'send', h: hostId, frame: { t: 'run.abort', runId: 'run_stale' } });
    await onB.next((f) => f.t === 'run.abort' && f.runId === 'run_stale');
  });
});
