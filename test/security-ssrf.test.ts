// Issue 10, hole 10: the connectivity test is no way into the hub's network.
// By default the hub refuses loopback, private, link-local and cloud-metadata
// addresses (literal, resolved by DNS, or IPv4-mapped) before connecting;
// MODEL_TEST_ALLOW_PRIVATE=1 opens private and loopback only. With `hostId`
// the probe runs on the caller's own host instead, where its loopback is fair.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, spawnAgentHost, makeFakeClaude, eventually, type AgentHostProcess } from './helpers/host.js';
import { apiError, failure } from './helpers/api-error.js';
import type { ModelTestInput } from '../src/client/index.js';

const KEY = 'sk-ssrf-KEY-0123456789abcdef';

/** A model endpoint on the loopback that answers `pong` and counts every TCP connection it sees. */
async function stubModel(): Promise<{ port: number; connections: () => number; hits: () => number; server: Server }> {
  let connections = 0;
  let hits = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ content: [{ type: 'text', text: 'pong' }] }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, hits: () => hits, server };
}

let strict: TestHub;
let open: TestHub;
let stub: Awaited<ReturnType<typeof stubModel>>;
let u: { id: string; key: string };
let ou: { id: string; key: string };
let tmp: string;
const procs: AgentHostProcess[] = [];
const draft = (baseUrl: string, extra: Partial<ModelTestInput> = {}): ModelTestInput => ({ apiType: 'anthropic', baseUrl, apiKey: KEY, modelName: 'm', ...extra });
const probe = (hub: TestHub, token: string, body: ModelTestInput) => hub.client(token).modelConfigs.test(body);

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ssrf-'));
  stub = await stubModel();
  strict = await startTestHub({ modelTestTimeoutMs: 3000, rateLimitModelTestPerMinute: 0 } as any);
  open = await startTestHub({ modelTestTimeoutMs: 3000, rateLimitModelTestPerMinute: 0 } as any, { MODEL_TEST_ALLOW_PRIVATE: '1' });
  u = await strict.user();
  ou = await open.user();
});
after(async () => {
  for (const p of procs) p.kill();
  await Promise.all(procs.map((p) => p.wait()));
  stub.server.closeAllConnections();
  stub.server.close();
  await strict.close();
  await open.close();
  await rm(tmp, { recursive: true, force: true });
});

const REFUSED_ALWAYS = [
  'http://169.254.169.254', // AWS/GCP metadata (link-local)
  'http://100.100.100.200', // Alibaba Cloud metadata
  'http://192.0.0.192', // Oracle Cloud metadata
  'http://168.63.129.16', // Azure wireserver
  'http://[fd00:ec2::254]', // AWS metadata over IPv6
  'http://[fe80::1]', // IPv6 link-local
  'http://[::ffff:169.254.169.254]', // IPv4-mapped metadata (URL normalizes it to ::ffff:a9fe:a9fe)
  'http://[::ffff:a9fe:a9fe]',
  'http://[64:ff9b::a9fe:a9fe]', // NAT64 of the metadata address (a VPC with DNS64/NAT64 routes it there)
  'http://[::169.254.169.254]', // IPv4-compatible form (URL normalizes it to ::a9fe:a9fe)
  'http://[2002:a9fe:a9fe::1]', // 6to4 of the metadata address
  'http://[2001:0:4136:e378:8000:63bf:5601:5601]', // Teredo, the metadata address as its (inverted) client
];
const REFUSED_BY_DEFAULT = [
  'http://10.1.2.3',
  'http://172.16.0.1',
  'http://192.168.1.1',
  'http://100.64.0.1',
  'http://0.0.0.0',
  'http://[::1]',
  'http://[fc00::1]',
  'http://[fd12:3456::1]',
  'http://[::ffff:10.0.0.1]',
  'http://[64:ff9b::7f00:1]', // NAT64 of loopback
  'http://[2002:7f00:1::]', // 6to4 of loopback
  'http://[fec0::1]', // site-local (deprecated, still routed inside some networks)
];

test('default: each refused class gets a refusal reason, and the loopback endpoint sees no connection', async () => {
  for (const base of [...REFUSED_ALWAYS, ...REFUSED_BY_DEFAULT, `http://127.0.0.1:${stub.port}`, `http://[::ffff:127.0.0.1]:${stub.port}`]) {
    const d = await probe(strict, u.key, draft(base));
    assert.equal(d.ok, false, `${base}: ${JSON.stringify(d)}`);
    assert.equal(d.reason, 'network', base);
    assert.match(d.error ?? '', /refused/, `${base}: the answer says the address was refused, not that a connection failed: ${d.error}`);
    assert.equal(typeof d.latencyMs, 'number');
  }
  assert.equal(stub.connections(), 0, 'no connection reached the loopback endpoint');
});

test('default: a name resolving to 127.0.0.1 (localhost) is refused after DNS resolution, without a connection', async () => {
  const before = stub.connections();
  const d = await probe(strict, u.key, draft(`http://localhost:${stub.port}`));
  assert.deepEqual([d.ok, d.reason], [false, 'network'], JSON.stringify(d));
  assert.match(d.error ?? '', /refused/);
  assert.match(d.error ?? '', /localhost resolves to a private or loopback address/);
  // What an internal name resolves to stays inside: the caller learns the class of address, not the address.
  assert.doesNotMatch(d.error ?? '', /127\.0\.0\.1|::1/, 'the answer does not name the resolved address');
  assert.equal(stub.connections(), before);
});

test('MODEL_TEST_ALLOW_PRIVATE=1 opens loopback, but metadata addresses stay refused', async () => {
  const ok = await probe(open, ou.key, draft(`http://127.0.0.1:${stub.port}`));
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.equal(ok.replyPreview, 'pong');
  const viaName = await probe(open, ou.key, draft(`http://localhost:${stub.port}`));
  assert.equal(viaName.ok, true, JSON.stringify(viaName));
  for (const base of REFUSED_ALWAYS) {
    const d = await probe(open, ou.key, draft(base));
    assert.deepEqual([d.ok, d.reason], [false, 'network'], `${base}: ${JSON.stringify(d)}`);
    assert.match(d.error ?? '', /refused/, base);
  }
});

test('a redirect towards a metadata address is not followed', async () => {
  const hops = createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' });
    res.end();
  });
  await new Promise<void>((r) => hops.listen(0, '127.0.0.1', r));
  try {
    const d = await probe(open, ou.key, draft(`http://127.0.0.1:${(hops.address() as AddressInfo).port}`));
    assert.equal(d.ok, false, JSON.stringify(d));
    assert.match(d.error ?? '', /redirect/);
  } finally {
    hops.closeAllConnections();
    hops.close();
  }
});

test('hostId: the probe runs on the caller\'s own host (a real CLI), reaching a model server on its loopback', async () => {
  const root = join(tmp, 'root');
  await mkdir(root, { recursive: true });
  const uc = strict.client(u.key);
  const { pairKey: key } = await uc.hosts.pairKey();
  const env = { AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: makeFakeClaude(tmp), CLAUDE_CONFIG_DIR: join(tmp, 'claude-config') };
  const p = spawnAgentHost(['run', '--hub', strict.url, '--pair-key', key, '--work-root', root], env);
  procs.push(p);
  const hostId = (await p.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  await eventually(async () => (await uc.hosts.get(hostId)).status === 'online');

  const hitsBefore = stub.hits();
  const viaHub = await probe(strict, u.key, draft(`http://127.0.0.1:${stub.port}`));
  assert.equal(viaHub.ok, false, 'the hub itself still refuses the loopback');
  assert.equal(stub.hits(), hitsBefore);

  // A stored configuration: the decrypted key travels to the host in the frame only.
  const c = await uc.modelConfigs.create({ name: 'local proxy', apiType: 'anthropic', baseUrl: `http://127.0.0.1:${stub.port}`, apiKey: KEY, modelName: 'm' });
  const r = await probe(strict, u.key, { id: c.id, hostId });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.replyPreview, 'pong');
  assert.equal(r.authMode, 'bearer');
  assert.equal(typeof r.latencyMs, 'number');
  assert.equal(stub.hits(), hitsBefore + 1, 'the host reached the endpoint');
  assert.ok(!p.output().includes(KEY), 'the key is never printed by the host');

  // Metadata addresses stay refused on the host too.
  const meta = await probe(strict, u.key, { ...draft('http://169.254.169.254'), hostId });
  assert.deepEqual([meta.ok, meta.reason], [false, 'network'], JSON.stringify(meta));
  assert.match(meta.error ?? '', /refused/);

  // Another user's host id reads as not found; a bad draft is still a 400 before anything is sent.
  const other = await strict.user();
  await assert.rejects(probe(strict, other.key, { ...draft(`http://127.0.0.1:${stub.port}`), hostId }), apiError(404));
  assert.equal(stub.hits(), hitsBefore + 1);
  await assert.rejects(probe(strict, u.key, { ...draft('ftp://x'), hostId }), apiError(400));

  // A paired host with no channel: a clear 409, not a hang or a 500.
  const offline = await pairHost(strict, u.key, 'offline-box');
  const off = await failure(probe(strict, u.key, { ...draft(`http://127.0.0.1:${stub.port}`), hostId: offline.hostId }));
  assert.equal(off.status, 409, off.message);
  assert.match(off.message, /offline/);
});
