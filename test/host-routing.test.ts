// HostRouting's rules for a frame that reached a node no longer holding its
// host (routing.ts): routed on once to the node presence names now; with
// nowhere to go, a request is answered offline and a run.start handed back;
// a closing node routes nothing on and hands no run.start back, whether the
// frame was routed on already or not; the sender forgets its reading.
// The multi-node paths over Redis are in multinode-route.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from '@msgpack/msgpack';
import { HostRouting, hostsTopic, type HostMsg, type SendMsg } from '../src/hosts/routing.js';
import { LocalBus } from '../src/bus/local.js';
import { LocalPresence } from '../src/hosts/presence.js';
import type { RequestMsg } from '../src/hosts/forwarding.js';

const entry = (nodeId: string) => ({ nodeId, running: 0, capacity: 2, engines: [], lastSeenAt: Date.now() });

/** Node B's routing, with what it routes on, answers offline and hands back recorded; presence names `where`. */
async function nodeB(where: Record<string, string>, opts: { closing?: boolean; presence?: LocalPresence } = {}) {
  const bus = new LocalBus();
  const presence = opts.presence ?? new LocalPresence();
  for (const [h, node] of Object.entries(where)) await presence.set(h, entry(node), 60_000);
  const published: Record<string, HostMsg[]> = {};
  for (const node of ['node-a', 'node-c']) {
    published[node] = [];
    bus.subscribe(hostsTopic(node), (p) => published[node].push(decode(p) as HostMsg));
  }
  const offline: RequestMsg[] = [];
  const undelivered: SendMsg[] = [];
  let closing = opts.closing ?? false;
  const routing = new HostRouting({
    bus, node: 'node-b', presenceStore: presence,
    read: async () => { throw new Error('not read by these paths'); },
    reuseMs: () => 60_000, here: () => {}, offline: (m) => offline.push(m), undelivered: (m) => undelivered.push(m), closing: () => closing,
  });
  return { routing, published, offline, undelivered, close: () => (closing = true) };
}

const start = (h: string, from?: string): SendMsg => ({
  k: 'send', h, from,
  frame: { t: 'run.start', runId: 'run_1', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hi', workDir: '/w', mode: 'default' },
  meta: { agentId: 'agt_1' },
});
const abort = (h: string): SendMsg => ({ k: 'send', h, frame: { t: 'run.abort', runId: 'run_1' } });
const request = (h: string): RequestMsg => ({ k: 'req', h, node: 'node-c', rid: 7, frame: { t: 'engines.refresh' } });

test('a frame for a host that moved goes on once to the node presence names now; its sender forgets its reading', async () => {
  const b = await nodeB({ h1: 'node-a' });
  await b.routing.routeOn(start('h1', 'node-c'));
  await b.routing.routeOn(request('h1'));
  assert.deepEqual(b.published['node-a'].map((m) => [m.k, (m as SendMsg).hop]), [['send', 1], ['req', 1]]);
  assert.deepEqual(b.published['node-c'], [{ k: 'forget', h: 'h1' }], 'the sending node is told to read presence again');
  assert.deepEqual([b.offline.length, b.undelivered.length], [0, 0]);
});

test('with nowhere to go, a request is answered offline, a run.start handed back and a run.abort dropped', async () => {
  const b = await nodeB({});
  await b.routing.routeOn(start('h1'));
  await b.routing.routeOn(request('h1'));
  await b.routing.routeOn(abort('h1'));
  assert.deepEqual(b.undelivered.map((m) => m.frame.runId), ['run_1']);
  assert.deepEqual(b.offline.map((m) => m.rid), [7]);
  // Routed on once already and still not found: the same answers, never a second hop.
  const c = await nodeB({ h1: 'node-a' });
  c.routing.nowhere({ ...start('h1'), hop: 1 });
  c.routing.nowhere({ ...request('h1'), hop: 1 });
  assert.deepEqual([c.undelivered.length, c.offline.length, c.published['node-a'].length], [1, 1, 0]);
});

test('a closing node routes nothing on and hands no run.start back, whether the frame was routed on already or not; requests are answered offline', async () => {
  const b = await nodeB({ h1: 'node-a' }, { closing: true });
  await b.routing.routeOn(start('h1'));
  await b.routing.routeOn(request('h1'));
  b.routing.nowhere({ ...start('h1'), hop: 1 });
  b.routing.nowhere({ ...request('h1'), hop: 1 });
  assert.equal(b.published['node-a'].length, 0, 'nothing is routed on by a node shutting down');
  assert.equal(b.undelivered.length, 0, 'no run is ended by a closing node\'s domain: the sweep of a live node judges it');
  assert.deepEqual(b.offline.map((m) => m.rid), [7, 7]);
});

test('a presence store that cannot be read: a request is answered offline, a run.start is left to the lost-run sweep', async () => {
  const broken = new LocalPresence();
  broken.get = async () => { throw new Error('redis down'); };
  const b = await nodeB({}, { presence: broken });
  await b.routing.routeOn(start('h1'));
  await b.routing.routeOn(request('h1'));
  assert.deepEqual([b.undelivered.length, b.offline.length], [0, 1]);
});

test('a send\'s presence: a reading naming this node (its channel closed here, the removal on its way) is offline and not kept; another node\'s is kept until a send of this node finds the host gone', async () => {
  const presence = new LocalPresence();
  await presence.set('h-here', entry('node-b'), 60_000);
  await presence.set('h-there', entry('node-a'), 60_000);
  const reads: string[] = [];
  const routing = new HostRouting({
    bus: new LocalBus(), node: 'node-b', presenceStore: presence,
    read: async (id) => {
      reads.push(id);
      const e = (await presence.get(id))!;
      return { hostId: id, status: 'online', running: 0, capacity: e.capacity, engines: [], lastSeenAt: e.lastSeenAt, nodeId: e.nodeId! };
    },
    reuseMs: () => 60_000, here: () => {}, offline: () => {}, undelivered: () => {}, closing: () => false,
  });
  assert.deepEqual(await routing.forSend('h-here'), { status: 'offline', capacity: 0 });
  assert.deepEqual(await routing.forSend('h-here'), { status: 'offline', capacity: 0 });
  assert.deepEqual(reads, ['h-here', 'h-here'], 'not kept: read again each time');
  assert.equal((await routing.forSend('h-there')).status, 'online');
  await routing.forSend('h-there');
  assert.equal(reads.filter((h) => h === 'h-there').length, 1, 'another node\'s reading is reused');
  // A send of this node's that reached a node not holding the host (here: itself) was sent on a misread: forgotten.
  await routing.routeOn(start('h-there', 'node-b'));
  await routing.forSend('h-there');
  assert.equal(reads.filter((h) => h === 'h-there').length, 2, 'the misread is forgotten');
});
