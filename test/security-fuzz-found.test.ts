// What bench/fuzz.ts found, each reproduced here. A NUL character in a JSON
// body string (`"\u0000"`) or a query value (`%00`) reached PostgreSQL, which
// refuses the byte in text: the hub answered 500. Strings are now checked
// before any handler runs → 400 4000 naming the field.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { pairHost, connectFakeHost } from './helpers/host.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('a NUL in a body string → 400 4000, never 5xx (fuzz seed 1, request 1352: PATCH /hosts/%5C/remark)', async () => {
  const u = await t.user();
  const hostId = await seedHost(t, u.id);
  const cases: Array<[string, string, unknown]> = [
    ['PATCH', '/api/v1/hosts/%5C/remark', { remark: '\u0000'.repeat(10) }],
    ['PATCH', `/api/v1/hosts/${hostId}/remark`, { remark: 'a\u0000b' }],
    ['POST', '/api/v1/me/keys', { name: 'k\u0000' }],
    ['POST', '/api/v1/model-configs', { name: 'c', apiType: 'anthropic', baseUrl: 'https://api.example.com', apiKey: 'sk-\u0000', modelName: 'm' }],
    ['POST', '/api/v1/agents', { name: 'nul', scope: 'private', hostId, engine: 'claude-code', workDir: '', desc: 'x\u0000' }],
    ['POST', '/api/v1/me/keys', { name: 'ok', nested: [{ deep: '\u0000' }] }],
  ];
  for (const [method, path, body] of cases) {
    const r = await t.api(method, path, { token: u.key, body });
    assert.deepEqual([r.status, r.body?.code], [400, '4000'], `${method} ${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
    assert.match(r.body.message, /NUL/);
  }
  const ok = await t.api('PATCH', `/api/v1/hosts/${hostId}/remark`, { token: u.key, body: { remark: 'plain' } });
  assert.equal(ok.status, 200, ok.text);
});

test('a NUL in a query value → 400 4000, never 5xx', async () => {
  const u = await t.user();
  for (const path of ['/api/v1/agents?q=%00', '/api/v1/agents/mine?q=a%00', '/api/v1/sessions?cursor=%00', '/api/v1/me/ledger?cursor=%00', '/api/v1/orders?status=%00', `/api/v1/admin/users?q=%00`]) {
    const r = await t.api('GET', path, { token: path.includes('admin') ? t.adminKey : u.key });
    assert.deepEqual([r.status, r.body?.code], [400, '4000'], `${path}: ${r.status} ${r.text}`);
  }
});

test('a lone surrogate in a body string (`"\\ud800"`) → 400 4000 naming the field, never 5xx (a message\'s content reached PostgreSQL as JSON it refuses)', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'sur');
  const host = await connectFakeHost(t, credential); // online: the message would reach hub_accept
  after(() => host.close());
  const agent = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'sur', scope: 'private', hostId, engine: 'claude-code', workDir: '' } });
  assert.equal(agent.status, 201, agent.text);
  const cases: Array<[string, string, string]> = [
    ['POST', '/api/v1/sessions', `{"agentId":"${agent.body.data.id}","content":"hi \\ud800 there"}`],
    ['POST', '/api/v1/sessions', `{"agentId":"${agent.body.data.id}","title":"low \\udc00 first"}`],
    ['PATCH', `/api/v1/hosts/${hostId}/remark`, `{"remark":"pair backwards \\ude00\\ud83d"}`],
    ['POST', '/api/v1/me/keys', `{"name":"ok","nested":[{"deep":"\\udbff"}]}`],
  ];
  for (const [method, path, raw] of cases) {
    const r = await fetch(t.url + path, { method, headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' }, body: raw });
    const body = await r.json();
    assert.deepEqual([r.status, body?.code], [400, '4000'], `${method} ${path} ${raw}: ${r.status} ${JSON.stringify(body)}`);
    assert.match(body.message, /surrogate/);
  }
  // A pair written as two escapes is one well-formed character.
  const ok = await fetch(t.url + `/api/v1/hosts/${hostId}/remark`, { method: 'PATCH', headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' }, body: '{"remark":"smile \\ud83d\\ude00"}' });
  assert.equal(ok.status, 200, await ok.text());
});

test('a page number past any real page (1e308: an integer to the schema, no offset to the database) → 400 4000, never 5xx (fuzz seed 3, request 42074)', async () => {
  const u = await t.user();
  const paged = ['/api/v1/me/ledger', '/api/v1/orders', '/api/v1/me/redeems', '/api/v1/agents', '/api/v1/agents/mine', '/api/v1/sessions', '/api/v1/admin/users', '/api/v1/admin/redeems'];
  for (const p of paged) {
    const token = p.includes('admin') ? t.adminKey : u.key;
    for (const page of ['1e%2B308', '1e308', String(2 ** 60)]) {
      const r = await t.api('GET', `${p}?page=${page}&pageSize=48`, { token });
      assert.deepEqual([r.status, r.body?.code], [400, '4000'], `${p}?page=${page}: ${r.status} ${r.text}`);
    }
    const last = await t.api('GET', `${p}?page=1000000`, { token });
    assert.equal(last.status, 200, `${p}?page=1000000 (the largest page) is still an empty page: ${last.text}`);
  }
});
