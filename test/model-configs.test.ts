// Model configurations: CRUD over real HTTP against a real database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError, failure } from './helpers/api-error.js';
import { MODEL_CONFIGS_PER_ACCOUNT } from '../src/account-caps.js';
import type { NewModelConfig } from '../src/client/index.js';

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

// Also bodies outside the typed shape (the bad-values cases): the client sends them as the same JSON.
const draft = (over: Record<string, unknown> = {}) => ({ name: 'mine', apiType: 'anthropic', baseUrl: endpointUrl, apiKey: KEY, modelName: 'claude-test-1', ...over }) as NewModelConfig;
const as = (u: { key: string }) => t.client(u.key);

test('create: mc- id, default authMode bearer, hint of first 4 + last 4, never the key', async () => {
  // Raw: checks the 201 envelope (code '0') and its whole text for the key.
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

  const explicit = await as(alice).modelConfigs.create(draft({ authMode: 'x-api-key', apiType: 'openai' }));
  assert.equal(explicit.authMode, 'x-api-key');
  assert.equal(explicit.apiType, 'openai');
});

test('an account holds at most MODEL_CONFIGS_PER_ACCOUNT configurations: one more is a 409', async () => {
  const u = await t.user();
  const c = as(u);
  const made = await Promise.all(Array.from({ length: MODEL_CONFIGS_PER_ACCOUNT }, (_, i) => c.modelConfigs.create(draft({ name: `m${i}` }))));
  await assert.rejects(c.modelConfigs.create(draft({ name: 'one more' })), apiError(409));
  await c.modelConfigs.remove(made[0].id);
  await c.modelConfigs.create(draft({ name: 'room again' }));
});

test('the key is stored sealed (AES-256-GCM), not in clear', async () => {
  const r = await as(alice).modelConfigs.create(draft());
  const rows = await t.hub.ctx.em().getConnection().execute(`select * from model_configs where id = ?`, [r.id]);
  const all = JSON.stringify(rows);
  assert.ok(!all.includes(KEY), 'the key must not be stored in clear');
  assert.match(rows[0].api_key_enc, /^v1\./);
});

test('create: required fields, unknown fields, bad values → 400 envelopes without the key', async () => {
  // Raw: the 400 envelope (data null) and its whole text.
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
    const e = await failure(as(alice).modelConfigs.create(body as NewModelConfig));
    assert.equal(e.status, 400, JSON.stringify(body));
    assert.ok(!e.message.includes(KEY));
    assert.ok(!e.message.includes('has space in it 1234'));
  }
  // Raw: a body that is not JSON.
  const notJson = await t.api('POST', '/api/v1/model-configs', { token: alice.key, raw: 'apiKey=' + KEY, headers: { 'content-type': 'application/json' } });
  assert.equal(notJson.status, 400);
  assert.ok(!notJson.text.includes(KEY));
  await assert.rejects(t.client().modelConfigs.create(draft()), apiError(401));
});

test('list: {items, total} of own configurations with hostCount; others see none of them', async () => {
  const u = await t.user();
  const uc = as(u);
  await uc.modelConfigs.create(draft({ name: 'one' }));
  await uc.modelConfigs.create(draft({ name: 'one' }));
  const r = await uc.modelConfigs.list();
  assert.equal(r.total, 2);
  assert.equal(r.items.length, 2);
  assert.ok(r.items.every((c) => c.hostCount === 0 && c.name === 'one'));
  assert.notEqual(r.items[0].id, r.items[1].id, 'duplicate names are allowed, ids differ');
  assert.ok(!JSON.stringify(r).includes(KEY));
  const other = await as(bob).modelConfigs.list();
  assert.ok(!other.items.some((c) => r.items.some((m) => m.id === c.id)));
});

test('PATCH keeps omitted fields and the stored key; a new key changes the hint', async () => {
  const ac = as(alice);
  const c = await ac.modelConfigs.create(draft());
  const p = await ac.modelConfigs.update(c.id, { name: 'renamed' });
  assert.equal(p.name, 'renamed');
  assert.equal(p.baseUrl, c.baseUrl);
  assert.equal(p.modelName, c.modelName);
  assert.equal(p.apiKeyHint, c.apiKeyHint);
  assert.equal(p.createdAt, c.createdAt);
  // The stored key still works: the endpoint only accepts KEY.
  seenKeys = [];
  const tested = await ac.modelConfigs.test({ id: c.id });
  assert.equal(tested.ok, true, JSON.stringify(tested));
  assert.deepEqual(seenKeys, [KEY]);

  const k = await ac.modelConfigs.update(c.id, { apiKey: 'sk-new-key-9876543210zyxw', modelName: 'm2' });
  assert.equal(k.apiKeyHint, 'sk-n****zyxw');
  assert.equal(k.modelName, 'm2');
  assert.equal(k.name, 'renamed');
  assert.ok(!JSON.stringify(k).includes('sk-new-key-9876543210zyxw'));
  seenKeys = [];
  await ac.modelConfigs.test({ id: c.id });
  assert.deepEqual(seenKeys, ['sk-new-key-9876543210zyxw']);

  assert.deepEqual(await ac.modelConfigs.get(c.id), k);
  await assert.rejects(ac.modelConfigs.update(c.id, { bogus: 1 } as any), apiError(400));
  await assert.rejects(ac.modelConfigs.update(c.id, { apiType: 'nope' } as any), apiError(400));
  // The baseUrl rule of creation holds for an edit: what a host is sent comes from here.
  for (const baseUrl of ['ftp://example.com', 'https://user:pw@example.com', 'https://example.com/v1?key=x', 'not a url']) {
    await assert.rejects(ac.modelConfigs.update(c.id, { baseUrl }), apiError(400), baseUrl);
  }
  assert.deepEqual(await ac.modelConfigs.get(c.id), k, 'unchanged');
});

test("another account's configuration is 404 on every verb, and stays unchanged", async () => {
  const ac = as(alice);
  const bc = as(bob);
  const c = await ac.modelConfigs.create(draft());
  await assert.rejects(bc.modelConfigs.get(c.id), apiError(404));
  await assert.rejects(bc.modelConfigs.update(c.id, { name: 'x' }), apiError(404));
  await assert.rejects(bc.modelConfigs.remove(c.id), apiError(404));
  await assert.rejects(bc.modelConfigs.test({ id: c.id }), apiError(404));
  assert.equal((await ac.modelConfigs.get(c.id)).name, 'mine');
  await assert.rejects(ac.modelConfigs.get('mc-doesnotexist'), apiError(404));
});

test('DELETE removes an unbound configuration', async () => {
  const ac = as(alice);
  const c = await ac.modelConfigs.create(draft());
  assert.deepEqual(await ac.modelConfigs.remove(c.id), { deleted: true });
  await assert.rejects(ac.modelConfigs.get(c.id), apiError(404));
  await assert.rejects(ac.modelConfigs.remove(c.id), apiError(404));
});

test('apply to an unknown or foreign host → 404; to a known config id only', async () => {
  const ac = as(alice);
  const c = await ac.modelConfigs.create(draft());
  await assert.rejects(ac.hosts.applyModelConfig('hst_nope', c.id), apiError(404));
  // Outside the typed shape, the same JSON as before: {} (configId undefined) and a number.
  await assert.rejects(ac.hosts.applyModelConfig('hst_nope', undefined as any), apiError(400));
  await assert.rejects(ac.hosts.applyModelConfig('hst_nope', 5 as any), apiError(400));
});
