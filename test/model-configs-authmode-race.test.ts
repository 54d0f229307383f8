// The connectivity test's auth-mode write-back, found by an audit.
//
// `testConfig` (src/model-configs/tester.ts) reads the stored configuration,
// runs the probe (up to MODEL_TEST_TIMEOUT_MS, 2 minutes by default), then
// compares what it tested with the snapshot it read at the start and calls
// `recordAuthMode(userId, id, mode)`, which writes the mode onto the row as it
// was then (service.ts: findOne by id, no version check). An edit made while the
// probe ran (a new endpoint and key, the owner's explicit authMode) gets the
// old endpoint's mode written over it, the version raised and the wrong
// variable (ANTHROPIC_API_KEY instead of ANTHROPIC_AUTH_TOKEN) re-synced to
// every bound host: the engine then authenticated wrongly at the new endpoint.
// The write-back now holds only for the version that was tested.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { eventually } from './helpers/host.js';

let t: TestHub;
const servers: Server[] = [];
before(async () => {
  t = await startTestHub({ modelTestTimeoutMs: 20_000, modelTestAllowPrivate: true, rateLimitModelTestPerMinute: 0 } as any);
});
after(async () => {
  for (const s of servers) s.closeAllConnections(), s.close();
  await t.close();
});

async function listen(s: Server): Promise<string> {
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

test('a test that started before an edit does not write its auth mode over the edited configuration', { timeout: 30_000 }, async () => {
  const u = await t.user();
  const c = t.client(u.key);

  // Old endpoint: refuses bearer, accepts x-api-key, but answers only when the test lets it.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let xApiKeyAsked = false;
  const oldUrl = await listen(createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (req.headers.authorization) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { type: 'authentication_error', message: 'use x-api-key' } }));
      }
      xApiKeyAsked = true;
      await gate;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ content: [{ type: 'text', text: 'pong' }] }));
    });
  }));
  // New endpoint: bearer only.
  const newUrl = await listen(createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.headers.authorization ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.headers.authorization ? { content: [{ type: 'text', text: 'pong' }] } : { error: { message: 'bearer only' } }));
    });
  }));

  const cfg = await c.modelConfigs.create({ name: 'cfg', apiType: 'anthropic', baseUrl: oldUrl, apiKey: 'sk-old-key-0123456789', modelName: 'm1' });
  assert.equal(cfg.authMode, 'bearer');

  const testing = c.modelConfigs.test({ id: cfg.id });
  await eventually(async () => xApiKeyAsked, 10_000, 20);

  // While the probe waits: the owner moves the configuration to another endpoint and key, bearer explicitly.
  const edited = await c.modelConfigs.update(cfg.id, { baseUrl: newUrl, apiKey: 'sk-new-key-9876543210', authMode: 'bearer' });
  assert.equal(edited.authMode, 'bearer');

  release();
  const r = await testing;
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.authMode, 'x-api-key', 'the old endpoint needed x-api-key');

  const now = await c.modelConfigs.get(cfg.id);
  assert.equal(now.baseUrl, newUrl);
  assert.equal(
    now.authMode,
    'bearer',
    'the auth mode detected for the old endpoint and key was written over the edited configuration (and re-synced to its hosts)',
  );
});
