// The hosts API and the host channel, black-box over HTTP and WebSocket with
// the in-process protocol client standing in for a host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, wrapHubQueries, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, CLAUDE_ENGINE } from './helpers/host.js';
import { CloseCodes } from '../host-protocol/version.js';
import { Encoder } from '@msgpack/msgpack';
import { decodeHubFrame } from '../host-protocol/codec.js';
import { apiError } from './helpers/api-error.js';
import { publishObj } from '../src/bus/bus.js';
import { hostsTopic } from '../src/hosts/gateway-impl.js';

let t: TestHub;
// A short heartbeat window keeps the offline and timeout cases quick.
const WINDOW = 2000;
before(async () => {
  t = await startTestHub({ hostHeartbeatTimeoutMs: WINDOW });
});
after(() => t.close());

const host = (key: string, id: string) => t.client(key).hosts.get(id);

test('pair key: user auth, single use, expiry', async () => {
  await assert.rejects(t.client().hosts.pairKey(), apiError(401));
  const u = await t.user();
  const c = t.client(u.key);
  const k = await c.hosts.pairKey();
  assert.match(k.pairKey, /^ahp_/);
  const ttl = k.expiresAt - Date.now();
  assert.ok(ttl > 9 * 60_000 && ttl <= 10 * 60_000, `lifetime ${ttl}`);

  // Raw: /hosts/pair is the host CLI's call, not the client's (and the 401 envelope is checked).
  const p = await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: k.pairKey, name: 'laptop' } });
  assert.equal(p.status, 201);
  assert.match(p.body.data.hostId, /^hst_/);
  assert.match(p.body.data.credential, /^ahh_/);

  const again = await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: k.pairKey, name: 'laptop' } });
  assert.equal(again.status, 401, 'a used pair key is refused');
  assert.equal(again.body.data, null);
  assert.equal((await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: 'ahp_forged' } })).status, 401);
  assert.equal((await t.api('POST', '/api/v1/hosts/pair', { body: {} })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: 'x', extra: 1 } })).status, 400);

  const k2 = await c.hosts.pairKey();
  await t.hub.ctx.em().getConnection().execute(`update pair_keys set expires_at = now() - interval '1 second' where used_at is null`);
  assert.equal((await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: k2.pairKey } })).status, 401, 'an expired pair key is refused');

  const list = await c.hosts.list();
  assert.equal(list.total, 1);
  const h = list.items[0];
  assert.equal(h.name, 'laptop');
  assert.equal(h.status, 'offline');
  assert.equal(h.modelConfig, null);
  assert.deepEqual(h.engines, []);
  assert.ok(!JSON.stringify(list).includes(p.body.data.credential), 'the credential is never shown again');
});

test('a host that says hello is online with its engines; available-hosts has the spec shape', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key, 'box');
  assert.deepEqual(await c.agents.availableHosts(), []);
  const fh = await connectFakeHost(t, credential, { capacity: 2, name: 'box', engines: [{ ...CLAUDE_ENGINE, version: '9.9.9' }] });
  assert.equal(fh.hostId, hostId);
  const av = await c.agents.availableHosts();
  assert.deepEqual(av, [{ id: hostId, name: 'box', status: 'online', engines: [{ id: 'claude-code', displayName: 'Claude Code' }] }]);
  const h = await host(u.key, hostId);
  assert.equal(h.status, 'online');
  assert.equal(h.capacity, 2);
  assert.equal(h.running, 0);
  assert.ok((h.lastSeenAt ?? 0) > Date.now() - 5000);
  assert.deepEqual(await c.hosts.engines(hostId), [{ id: 'claude-code', displayName: 'Claude Code', version: '9.9.9' }]);
  await assert.rejects(t.client().agents.availableHosts(), apiError(401));
  // hello data reaches the database (batched): cliVersion shows up.
  await eventually(async () => (await host(u.key, hostId)).cliVersion === 'fake-0.0.1');
  fh.close();
  await eventually(async () => (await host(u.key, hostId)).status === 'offline');
  assert.deepEqual(await c.agents.availableHosts(), []);
});

test('busy when running tasks reach capacity', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const fh = await connectFakeHost(t, credential, { capacity: 1, running: ['run_1'] });
  const av = await t.client(u.key).agents.availableHosts();
  assert.equal(av[0].status, 'busy');
  assert.equal((await host(u.key, hostId)).running, 1);
  fh.close();
});

test('the hub pongs app-level pings with the same id', async () => {
  const u = await t.user();
  const { credential } = await pairHost(t, u.key);
  const fh = await connectFakeHost(t, credential, { heartbeat: false });
  const rtt = await fh.ping();
  assert.ok(rtt >= 0 && rtt < 1000);
  // The CLI's plain forms (answered from their own bytes, host-protocol/ping.ts) and another form of
  // the same frame (keys in another order: the general path) each get their own pong, id and ts kept.
  const pongs = new Map<number, number | undefined>();
  fh.ws.on('message', (data: Buffer) => {
    const d = decodeHubFrame(data);
    if (d.frame?.t === 'pong') pongs.set(d.frame.id, d.frame.ts);
  });
  const ts = Date.now();
  fh.send({ t: 'ping', id: 41, ts });
  fh.send({ t: 'ping', id: 70_000 });
  fh.send(new Encoder().encode({ ts: 5, id: 43, t: 'ping' }));
  await eventually(async () => pongs.size === 3 || undefined, 5000, 10);
  assert.deepEqual([...pongs].sort((a, b) => a[0] - b[0]), [[41, ts], [43, 5], [70_000, undefined]]);
  fh.close();
});

test('forged, missing and revoked credentials are refused on upgrade', async () => {
  await assert.rejects(connectFakeHost(t, 'ahh_forged'), (e: any) => e.status === 401);
  await assert.rejects(connectFakeHost(t, ''), (e: any) => e.status === 401);
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const fh = await connectFakeHost(t, credential);
  const uc = t.client(u.key);
  assert.deepEqual(await uc.hosts.remove(hostId), { deleted: true });
  const c = await fh.closed;
  assert.equal(c.code, CloseCodes.HOST_DELETED.code, 'deleting the host closes its channel at once');
  await assert.rejects(connectFakeHost(t, credential), (e: any) => e.status === 401);
  // Raw: the heartbeat is the host CLI's call.
  assert.equal((await t.api('POST', '/api/v1/hosts/heartbeat', { token: credential })).status, 401);
  await assert.rejects(uc.hosts.get(hostId), apiError(404));
  await assert.rejects(uc.hosts.remove(hostId), apiError(404));
});

test('a credential look-up that read the host\'s row before its deletion neither admits nor caches it', { skip: process.env.DATABASE_URL ? false : 'the held look-up keeps its connection: needs a second one for the deletion (PostgreSQL)' }, async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  let read!: () => void;
  const wasRead = new Promise<void>((r) => (read = r));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  // The look-up runs and reads the row; its answer reaches the hub only after the host is deleted.
  const restore = wrapHubQueries(t.hub, (q, send) => {
    if (!/from hosts where credential_hash = any/.test(q.text)) return send();
    return Promise.resolve(send()).then(async (r) => (read(), await held, r));
  });
  try {
    const connecting = connectFakeHost(t, credential);
    connecting.catch(() => undefined); // asserted below
    await wasRead;
    assert.deepEqual(await t.client(u.key).hosts.remove(hostId), { deleted: true });
    release();
    await assert.rejects(connecting, (e: any) => e.status === 401, 'the deleted host is not admitted');
  } finally {
    release();
    restore();
  }
  await assert.rejects(connectFakeHost(t, credential), (e: any) => e.status === 401, 'nor served from the cache afterwards');
});

test('wrong version, bad bytes and frames before hello close with the documented codes', async () => {
  const u = await t.user();
  const { credential } = await pairHost(t, u.key);
  await assert.rejects(connectFakeHost(t, credential, { v: 999 }), (e: any) => e.code === CloseCodes.VERSION.code);
  const a = await connectFakeHost(t, credential, { noHello: true });
  a.send(new Uint8Array([0xc1, 0xff, 0x00]));
  assert.equal((await a.closed).code, CloseCodes.BAD_FRAME.code);
  const b = await connectFakeHost(t, credential, { noHello: true });
  b.send({ t: 'ping', id: 1 });
  assert.equal((await b.closed).code, CloseCodes.HELLO_TWICE.code);
  const c = await connectFakeHost(t, credential);
  c.send({ t: 'hello', v: 1, cli: 'x', name: 'x', capacity: 1, engines: [] });
  assert.equal((await c.closed).code, CloseCodes.HELLO_TWICE.code);
  const d = await connectFakeHost(t, credential, { noHello: true });
  assert.equal((await d.closed).code, CloseCodes.HELLO_TIMEOUT.code, 'a socket that never says hello is closed');
  // The hub still serves.
  await t.client(u.key).hosts.list();
});

test('a second channel for the same host replaces the first', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const first = await connectFakeHost(t, credential);
  const second = await connectFakeHost(t, credential);
  assert.equal((await first.closed).code, CloseCodes.REPLACED.code);
  assert.equal((await host(u.key, hostId)).status, 'online', 'the old channel closing leaves the new one online');
  second.close();
});

test('a silent host goes offline after the heartbeat window', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const fh = await connectFakeHost(t, credential, { heartbeat: false });
  assert.equal((await host(u.key, hostId)).status, 'online');
  const c = await fh.closed;
  assert.equal(c.code, CloseCodes.HEARTBEAT.code);
  assert.equal((await host(u.key, hostId)).status, 'offline');
});

test('directories: asked over the channel, relative only, offline → 409, silence → 504', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  await assert.rejects(c.hosts.directories(hostId), apiError(409, '4094'));
  const fh = await connectFakeHost(t, credential);
  assert.deepEqual(await c.hosts.directories(hostId), { path: '', entries: [{ name: 'src', path: 'src' }] });
  assert.deepEqual(await c.hosts.directories(hostId, './a/b/'), { path: 'a/b', entries: [{ name: 'src', path: 'a/b/src' }] });
  const asked = fh.frames.filter((f) => f.t === 'dirs.list').map((f: any) => f.path);
  assert.deepEqual(asked, ['', 'a/b']);
  for (const bad of ['../x', '/etc', 'a/../../b', 'C:/x']) await assert.rejects(c.hosts.directories(hostId, bad), apiError(400), bad);
  // Raw: a query parameter the client never sends.
  assert.equal((await t.api('GET', `/api/v1/hosts/${hostId}/directories?nope=1`, { token: u.key })).status, 400);
  fh.close();
  await fh.closed;

  const silent = await connectFakeHost(t, credential, { answer: () => undefined });
  const started = Date.now();
  await assert.rejects(c.hosts.directories(hostId), apiError(504, '5040'));
  assert.ok(Date.now() - started >= WINDOW - 100);
  silent.close();
  await silent.closed;

  const refusing = await connectFakeHost(t, credential, { answer: (f) => ({ t: 'reply', id: f.id, ok: false, code: 'not_found', error: 'no such directory' }) });
  await assert.rejects(c.hosts.directories(hostId, 'missing'), apiError(404));
  refusing.close();
  await refusing.closed;

  const liar = await connectFakeHost(t, credential, { answer: (f) => ({ t: 'reply', id: f.id, ok: true, data: { nonsense: true } }) });
  await assert.rejects(c.hosts.directories(hostId), apiError(502));
  // A host closing while a request waits answers at once (not after the timeout).
  const quitter = await connectFakeHost(t, credential, { answer: () => undefined });
  await liar.closed;
  const pending = c.hosts.directories(hostId);
  pending.catch(() => undefined); // asserted below, after the host quits
  await quitter.next((f) => f.t === 'dirs.list');
  quitter.close();
  await assert.rejects(pending, apiError(409));
});

test('a reply settles only its own host\'s request: another host answering its id, or closing, leaves it waiting; a host cannot speak the hub\'s "offline" or "lost"', async () => {
  const a = await t.user();
  const b = await t.user();
  const pa = await pairHost(t, a.key, 'asked');
  const pb = await pairHost(t, b.key, 'other');
  const hostA = await connectFakeHost(t, pa.credential, { answer: () => undefined });
  const hostB = await connectFakeHost(t, pb.credential, { answer: () => undefined });
  const ca = t.client(a.key);
  const pending = ca.hosts.directories(pa.hostId);
  pending.catch(() => undefined); // asserted below
  const asked: any = await hostA.next((f) => f.t === 'dirs.list');
  // Request ids count up on a node: another host can guess one.
  hostB.send({ t: 'reply', id: asked.id, ok: true, data: { path: '', entries: [{ name: 'forged', path: 'forged' }] } });
  await hostB.ping();
  hostB.close();
  await hostB.closed; // the hub's close handler has run: its close echo came after it
  hostA.send({ t: 'reply', id: asked.id, ok: true, data: { path: '', entries: [{ name: 'real', path: 'real' }] } });
  assert.deepEqual(await pending, { path: '', entries: [{ name: 'real', path: 'real' }] }, 'answered by its own host only');
  hostA.close();
  await hostA.closed;
  // A host's own words reach the caller cut to 500 characters.
  const wordy = await connectFakeHost(t, pa.credential, { answer: (f) => ({ t: 'reply', id: f.id, ok: false, code: 'invalid', error: 'w'.repeat(4000) }) });
  await assert.rejects(ca.hosts.directories(pa.hostId), (e: any) => e.status === 400 && e.message === 'w'.repeat(500));
  wordy.close();
  await wordy.closed;
  // "offline" and "lost" are the hub's words (no channel took it; the channel closed after it went out): from a host they are a refusal.
  for (const code of ['offline', 'lost']) {
    const h = await connectFakeHost(t, pa.credential, { answer: (f) => ({ t: 'reply', id: f.id, ok: false, code, error: 'says ' + code }) });
    await assert.rejects(ca.hosts.directories(pa.hostId), apiError(409, '4090'), code);
    h.close();
    await h.closed;
  }
});

test('another node\'s takeover: an earlier one leaves the channel open, a later one or one without its epoch (an older node\'s) closes it', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const topic = hostsTopic(t.hub.ctx.config.nodeId);
  const fh = await connectFakeHost(t, credential);
  await eventually(async () => (await host(u.key, hostId)).status === 'online' || undefined, 5000, 20);
  publishObj(t.hub.ctx.bus, topic, { k: 'takeover', h: hostId, node: 'node-elsewhere', epoch: 0 });
  let closed = false;
  void fh.closed.then(() => (closed = true));
  // A frame published after it on the same topic arrives after it (the Bus keeps one publisher's order).
  publishObj(t.hub.ctx.bus, topic, { k: 'send', h: hostId, frame: { t: 'run.abort', runId: 'run_sentinel' } });
  await fh.next((f) => f.t === 'run.abort');
  assert.equal(closed, false, 'a takeover older than the channel\'s own write is ignored');
  publishObj(t.hub.ctx.bus, topic, { k: 'takeover', h: hostId, node: 'node-elsewhere' });
  assert.equal((await fh.closed).code, CloseCodes.REPLACED.code, 'no epoch: the channel gives way (the host reconnects)');
  const again = await connectFakeHost(t, credential);
  publishObj(t.hub.ctx.bus, topic, { k: 'takeover', h: hostId, node: 'node-elsewhere', epoch: Number.MAX_SAFE_INTEGER });
  assert.equal((await again.closed).code, CloseCodes.REPLACED.code, 'a later hello elsewhere takes it over');
});

test('refresh asks the host for its engines; remark renames', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'orig');
  let engines = [CLAUDE_ENGINE];
  const fh = await connectFakeHost(t, credential, {
    name: 'orig',
    engines: [],
    answer: (f) => (f.t === 'engines.refresh' ? { t: 'reply', id: f.id, ok: true, data: { engines } } : undefined),
  });
  const c = t.client(u.key);
  assert.deepEqual((await host(u.key, hostId)).engines, []);
  const r = await c.hosts.refresh(hostId);
  assert.deepEqual(r.engines, engines);
  assert.deepEqual((await c.agents.availableHosts())[0].engines, [{ id: 'claude-code', displayName: 'Claude Code' }]);

  const rm = await c.hosts.setRemark(hostId, 'build box');
  assert.equal(rm.remark, 'build box');
  assert.equal(rm.name, 'orig');
  assert.equal((await c.agents.availableHosts())[0].name, 'build box');
  // Raw: a field the client's setRemark never sends.
  assert.equal((await t.api('PATCH', `/api/v1/hosts/${hostId}/remark`, { token: u.key, body: { remark: 'x', name: 'y' } })).status, 400);
  await assert.rejects(c.hosts.setRemark(hostId, 'x'.repeat(201)), apiError(400));
  const cleared = await c.hosts.setRemark(hostId, null);
  assert.equal(cleared.remark, null);
  fh.close();
  await fh.closed;
  await assert.rejects(c.hosts.refresh(hostId), apiError(409));
});

test("another account's host is a 404 everywhere", async () => {
  const a = await t.user();
  const b = await t.user();
  const { hostId, credential } = await pairHost(t, a.key);
  const fh = await connectFakeHost(t, credential);
  const calls: Array<[string, string, unknown?]> = [
    ['GET', `/api/v1/hosts/${hostId}`],
    ['DELETE', `/api/v1/hosts/${hostId}`],
    ['GET', `/api/v1/hosts/${hostId}/engines`],
    ['GET', `/api/v1/hosts/${hostId}/directories`],
    ['POST', `/api/v1/hosts/${hostId}/refresh`],
    ['PATCH', `/api/v1/hosts/${hostId}/remark`, { remark: 'mine' }],
  ];
  // Raw: the 404 envelope (data null) on every route of another's host.
  for (const [m, p, body] of calls) {
    const r = await t.api(m, p, { token: b.key, body });
    assert.equal(r.status, 404, `${m} ${p}`);
    assert.equal(r.body.data, null);
  }
  const bc = t.client(b.key);
  assert.equal((await bc.hosts.list()).total, 0);
  assert.deepEqual(await bc.agents.availableHosts(), []);
  assert.equal((await host(a.key, hostId)).status, 'online', 'still there for its owner');
  await assert.rejects(t.client(a.key).hosts.get('hst_nope'), apiError(404));
  fh.close();
});

test('HTTP heartbeat keeps a polling host online for one window', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  // Raw: the heartbeat is the host CLI's call (the client has none).
  assert.equal((await t.api('POST', '/api/v1/hosts/heartbeat')).status, 401);
  assert.equal((await t.api('POST', '/api/v1/hosts/heartbeat', { token: u.key })).status, 401, 'a user key is not a host credential');
  const hb = await t.api('POST', '/api/v1/hosts/heartbeat', { token: credential, body: { capacity: 3, engines: [CLAUDE_ENGINE] } });
  assert.equal(hb.status, 200);
  assert.equal(hb.body.data.hostId, hostId);
  assert.equal(hb.body.data.status, 'online');
  assert.ok(hb.body.data.heartbeatMs > 0);
  assert.equal((await t.api('POST', '/api/v1/hosts/heartbeat', { token: credential, body: { capacity: 0 } })).status, 400);
  const h = await host(u.key, hostId);
  assert.equal(h.status, 'online');
  assert.equal(h.capacity, 3);
  assert.ok((h.lastSeenAt ?? 0) > Date.now() - 5000);
  // Polling hosts hold no channel: requests fail fast.
  await assert.rejects(t.client(u.key).hosts.directories(hostId), apiError(409));
  assert.equal((await t.api('POST', '/api/v1/hosts/heartbeat', { token: credential })).status, 200, 'an empty body is fine');
  await eventually(async () => (await host(u.key, hostId)).status === 'offline', WINDOW * 3);
  assert.ok(((await host(u.key, hostId)).lastSeenAt ?? 0) > Date.now() - 10_000, 'last seen persists after going offline');
});
