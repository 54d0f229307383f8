// Sockets authenticated with a host's credential wait for `hello` (closed after the heartbeat
// window if it never comes). One credential opened any number of them: each an open file and a
// connection object on the node for that window, so one owner's script could take a node's
// file descriptors (20,000 here) from every other host. A host holds at most PRE_HELLO_PER_HOST
// such sockets per node; a newer one closes the oldest with 4408 (the CLI reconnects after it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, type FakeHost } from './helpers/host.js';
import { CloseCodes, HOST_WS_PATH } from '../host-protocol/version.js';
import { PRE_HELLO_PER_HOST } from '../src/hosts/pre-hello.js';
import { CONNECTS_PER_HOST_PER_MINUTE, CONNECT_WINDOW_MS } from '../src/hosts/connect-rate.js';
import WebSocket from 'ws';

let t: TestHub;
const opened: FakeHost[] = [];
before(async () => {
  t = await startTestHub(); // the default window: a socket without hello stays 15 s unless the bound closes it
});
after(async () => {
  for (const h of opened) h.ws.terminate();
  await t?.close();
});

const connected = async () => (await t.hub.runFrames.gateway.counts()).connected;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('one credential holds at most PRE_HELLO_PER_HOST sockets before hello: each newer closes the oldest (4408), and the newest still says hello', async () => {
  const u = await t.user();
  const { credential } = await pairHost(t, u.key);
  const other = await pairHost(t, u.key);
  const bystander = await connectFakeHost(t, other.credential, { noHello: true });
  opened.push(bystander);
  const socks: FakeHost[] = [];
  for (let i = 0; i < 12; i++) {
    const s = await connectFakeHost(t, credential, { noHello: true });
    opened.push(s);
    socks.push(s);
  }
  const codes = await Promise.all(socks.slice(0, 12 - PRE_HELLO_PER_HOST).map((s) => Promise.race([s.closed.then((c) => c.code), settle(3000).then(() => 'still open')])));
  assert.deepEqual(codes, Array(12 - PRE_HELLO_PER_HOST).fill(CloseCodes.HELLO_TIMEOUT.code), 'the oldest went at once, not after the 15-s window');
  await settle(100);
  for (const s of socks.slice(-PRE_HELLO_PER_HOST)) assert.equal(s.ws.readyState, s.ws.OPEN);
  assert.equal(bystander.ws.readyState, bystander.ws.OPEN, 'another host\'s socket is untouched');
  assert.equal(await connected(), PRE_HELLO_PER_HOST + 1);

  const newest = socks.at(-1)!;
  newest.send({ t: 'hello', v: 1, cli: 'fake-0.0.1', name: 'fake', capacity: 1, engines: [] });
  const welcome = await newest.next((f) => f.t === 'welcome');
  assert.equal(welcome.t, 'welcome');
});

test('deleting a host closes every socket of it still waiting for hello', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const socks = await Promise.all([0, 1, 2].map(() => connectFakeHost(t, credential, { noHello: true })));
  opened.push(...socks);
  await t.client(u.key).hosts.remove(hostId);
  for (const s of socks) assert.equal((await s.closed).code, CloseCodes.HOST_DELETED.code);
});

test('one credential opens at most HOST_CONNECTS_PER_MINUTE sockets a minute on a node: then 429 with Retry-After, and other hosts connect', async () => {
  const u = await t.user();
  const { credential } = await pairHost(t, u.key);
  const other = await pairHost(t, u.key);
  for (let i = 0; i < CONNECTS_PER_HOST_PER_MINUTE; i++) (await connectFakeHost(t, credential, { noHello: true })).ws.terminate();
  const refused = await new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    const ws = new WebSocket(`${t.url.replace(/^http/, 'ws')}${HOST_WS_PATH}`, { headers: { authorization: `Bearer ${credential}` } });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined });
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('upgraded past the budget')));
    ws.once('error', () => {});
  });
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.retryAfter) >= 1 && Number(refused.retryAfter) <= CONNECT_WINDOW_MS / 1000, `Retry-After ${refused.retryAfter}`);
  const h = await connectFakeHost(t, other.credential);
  opened.push(h);
  assert.ok(h.hostId, 'another host is not held to this one\'s budget');
});
