// Model configurations: CRUD over real HTTP against a real database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';

const KEY = 'sk-ant-test-0123456789abcdefWXYZ';
let t: TestHub;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
let endpoint: Server;
let endpointUrl: string;
let seenKeys: string[] = [];

before(async () => {
  // The test endpoint listens on the loopback: allowed here as on a single-user hub.
  t = await startTestHub({ rateLimitModelTestPerMinute: 0, modelTestAllowPrivate: true } as any);
  alice = await t.user('alice');
  bob = await t.user('bob');
  // A messages endpoint that answers only the key it was given, by bearer.
  endpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      seenKeys.push(key);
      res.setHeader('content-type', 'application/json');
      if (key !== KEY && key !== 'sk-new-key-9876543210zyxw') {
        res.statusCode = 401;
        return res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid key' } }));
      }
      res.end(JSON.stringify({ content: [{ type: 'text', text: 'pong' }] }));
    });
  });
  await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
});
after(async () => {
  endpoint.close();
  await t.close();
});

const draft = (over: Record<string, unknown> = {}) => ({ name: 'mine', apiType: 'anthropic', baseUrl: endpointUrl, apiKey: KEY, modelName: 'claude-test-1', ...over });

test('create: mc- id, default authMode bearer, hint of first 4 + last 4, never the key', async () => {
  const r = await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() });
  assert.equal(r.status, 201);
  assert.equal(r.body.code, '0');
  const c = r.body.data;
  assert.match(c.id, /^mc-[A-Za-z0-9]+$/);
  assert.deepEqual(
    { name: c.name, apiType: c.apiType, baseUrl: c.baseUrl, authMode: c.authMode, modelName: c.modelName, hostCount: c.hostCount, apiKeyHint: c.apiKeyHint },
    { name: 'mine', apiType: 'anthropic', baseUrl: endpointUrl, authMode: 'bearer', modelName: 'claude-test-1', hostCount: 0, apiKeyHint: 'sk-a****WXYZ' },
  );
  assert.match(c.createdAt, /^\d{4}-\d\d-\d\dT.*Z$/);
  assert.match(c.updatedAt, /^\d{4}-\d\d-\d\dT.*Z$/);
  assert.ok(!('apiKey' in c));
  assert.ok(!r.text.includes(KEY));

  const explicit = await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft({ authMode: 'x-api-key', apiType: 'openai' }) });
  assert.equal(explicit.status, 201);
  assert.equal(explicit.body.data.authMode, 'x-api-key');
  assert.equal(explicit.body.data.apiType, 'openai');
});

test('the key is stored sealed (AES-256-GCM), not in clear', async () => {
  const r = await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() });
  const rows = await t.hub.ctx.em().getConnection().execute(`select * from model_configs where id = ?`, [r.body.data.id]);
  const all = JSON.stringify(rows);
  assert.ok(!all.includes(KEY), 'the key must not be stored in clear');
  assert.match(rows[0].api_key_enc, /^v1\./);
});

test('create: required fields, unknown fields, bad values → 400 envelopes without the key', async () => {
  for (const missing of ['name', 'apiType', 'baseUrl', 'apiKey', 'modelName']) {
    const body: Record<string, unknown> = draft();
    delete body[missing];
    const r = await t.api('POST', '/api/v1/model-configs', { token: alice.key, body });
    assert.equal(r.status, 400, missing);
    assert.equal(r.body.data, null);
    assert.match(r.body.message, new RegExp(missing));
    assert.ok(!r.text.includes(KEY));
  }
  const bad: Array<Record<string, unknown>> = [
    draft({ apiType: 'gemini' }),
    draft({ authMode: 'basic' }),
    draft({ baseUrl: 'ftp://example.com' }),
    draft({ baseUrl: 'not a url' }),
    draft({ baseUrl: 'https://user:pw@example.com' }),
    draft({ name: '' }),
    draft({ apiKey: '' }),
    draft({ apiKey: 'has space in it 1234' }),
    draft({ extra: 1 }),
  ];
  for (const body of bad) {
    const r = await t.api('POST', '/api/v1/model-configs', { token: alice.key, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(!r.text.includes(KEY));
    assert.ok(!r.text.includes('has space in it 1234'));
  }
  const notJson = await t.api('POST', '/api/v1/model-configs', { token: alice.key, raw: 'apiKey=' + KEY, headers: { 'content-type': 'application/json' } });
  assert.equal(notJson.status, 400);
  assert.ok(!notJson.text.includes(KEY));
  assert.equal((await t.api('POST', '/api/v1/model-configs', { body: draft() })).status, 401);
});

test('list: {items, total} of own configurations with hostCount; others see none of them', async () => {
  const u = await t.user();
  await t.api('POST', '/api/v1/model-configs', { token: u.key, body: draft({ name: 'one' }) });
  await t.api('POST', '/api/v1/model-configs', { token: u.key, body: draft({ name: 'one' }) });
  const r = await t.api('GET', '/api/v1/model-configs', { token: u.key });
  assert.equal(r.status, 200);
  assert.equal(r.body.data.total, 2);
  assert.equal(r.body.data.items.length, 2);
  assert.ok(r.body.data.items.every((c: any) => c.hostCount === 0 && c.name === 'one'));
  assert.notEqual(r.body.data.items[0].id, r.body.data.items[1].id, 'duplicate names are allowed, ids differ');
  assert.ok(!r.text.includes(KEY));
  const other = await t.api('GET', '/api/v1/model-configs', { token: bob.key });
  assert.ok(!other.body.data.items.some((c: any) => r.body.data.items.some((m: any) => m.id === c.id)));
});

test('PATCH keeps omitted fields and the stored key; a new key changes the hint', async () => {
  const c = (await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() })).body.data;
  const p = await t.api('PATCH', `/api/v1/model-configs/${c.id}`, { token: alice.key, body: { name: 'renamed' } });
  assert.equal(p.status, 200);
  assert.equal(p.body.data.name, 'renamed');
  assert.equal(p.body.data.baseUrl, c.baseUrl);
  assert.equal(p.body.data.modelName, c.modelName);
  assert.equal(p.body.data.apiKeyHint, c.apiKeyHint);
  assert.equal(p.body.data.createdAt, c.createdAt);
  // The stored key still works: the endpoint only accepts KEY.
  seenKeys = [];
  const tested = await t.api('POST', '/api/v1/model-configs/test', { token: alice.key, body: { id: c.id } });
  assert.equal(tested.body.data.ok, true, JSON.stringify(tested.body));
  assert.deepEqual(seenKeys, [KEY]);

  const k = await t.api('PATCH', `/api/v1/model-configs/${c.id}`, { token: alice.key, body: { apiKey: 'sk-new-key-9876543210zyxw', modelName: 'm2' } });
  assert.equal(k.body.data.apiKeyHint, 'sk-n****zyxw');
  assert.equal(k.body.data.modelName, 'm2');
  assert.equal(k.body.data.name, 'renamed');
  assert.ok(!k.text.includes('sk-new-key-9876543210zyxw'));
  seenKeys = [];
  await t.api('POST', '/api/v1/model-configs/test', { token: alice.key, body: { id: c.id } });
  assert.deepEqual(seenKeys, ['sk-new-key-9876543210zyxw']);

  const g = await t.api('GET', `/api/v1/model-configs/${c.id}`, { token: alice.key });
  assert.deepEqual(g.body.data, k.body.data);
  assert.equal((await t.api('PATCH', `/api/v1/model-configs/${c.id}`, { token: alice.key, body: { bogus: 1 } })).status, 400);
  assert.equal((await t.api('PATCH', `/api/v1/model-configs/${c.id}`, { token: alice.key, body: { apiType: 'nope' } })).status, 400);
});

test("another account's configuration is 404 on every verb, and stays unchanged", async () => {
  const c = (await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() })).body.data;
  assert.equal((await t.api('GET', `/api/v1/model-configs/${c.id}`, { token: bob.key })).status, 404);
  assert.equal((await t.api('PATCH', `/api/v1/model-configs/${c.id}`, { token: bob.key, body: { name: 'x' } })).status, 404);
  assert.equal((await t.api('DELETE', `/api/v1/model-configs/${c.id}`, { token: bob.key })).status, 404);
  const probe = await t.api('POST', '/api/v1/model-configs/test', { token: bob.key, body: { id: c.id } });
  assert.equal(probe.status, 404);
  assert.equal((await t.api('GET', `/api/v1/model-configs/${c.id}`, { token: alice.key })).body.data.name, 'mine');
  assert.equal((await t.api('GET', '/api/v1/model-configs/mc-doesnotexist', { token: alice.key })).status, 404);
});

test('DELETE removes an unbound configuration', async () => {
  const c = (await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() })).body.data;
  const d = await t.api('DELETE', `/api/v1/model-configs/${c.id}`, { token: alice.key });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body.data, { deleted: true });
  assert.equal((await t.api('GET', `/api/v1/model-configs/${c.id}`, { token: alice.key })).status, 404);
  assert.equal((await t.api('DELETE', `/api/v1/model-configs/${c.id}`, { token: alice.key })).status, 404);
});

test('apply to an unknown or foreign host → 404; to a known config id only', async () => {
  const c = (await t.api('POST', '/api/v1/model-configs', { token: alice.key, body: draft() })).body.data;
  const r = await t.api('POST', '/api/v1/hosts/hst_nope/model-config', { token: alice.key, body: { configId: c.id } });
  assert.equal(r.status, 404);
  assert.equal((await t.api('POST', '/api/v1/hosts/hst_nope/model-config', { token: alice.key, body: {} })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/hosts/hst_nope/model-config', { token: alice.key, body: { configId: 5 } })).status, 400);
});
