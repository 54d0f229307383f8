// Isolation, generated from the route table (issue 14 part 8): every route
// that needs a principal × {no credentials, a deleted key, an expired JWT,
// a normal user on an administrator route, another account's resource} →
// 401 / 401 / 401 4011 / 403 4031 / 404. A new route with a path parameter
// and no entry in OWNED fails the test, so its isolation is decided on purpose.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

type Kind = 'key' | 'order' | 'redeem' | 'host' | 'agent' | 'session' | 'config' | 'missing';
/** Per user route with a path parameter: whose resource `:id` names, and a body that passes validation. */
const OWNED: Record<string, { id: Kind; body?: unknown } | { exempt: string }> = {
  'POST /api/v1/me/keys/:id/refresh': { id: 'key' },
  'DELETE /api/v1/me/keys/:id': { id: 'key' },
  'POST /api/v1/me/idem/:provider/link': { exempt: 'the parameter is a provider name, not a resource' },
  'DELETE /api/v1/me/idem/:provider': { exempt: 'the parameter is a provider name, not a resource' },
  'GET /api/v1/me/chatapp/binding-attempts/:id': { id: 'missing' },
  'GET /api/v1/orders/:id': { id: 'order' },
  'POST /api/v1/orders/:id/cancel': { id: 'order' },
  'GET /api/v1/me/redeems/:id': { id: 'redeem' },
  'PATCH /api/v1/me/redeems/:id/read': { id: 'redeem' },
  'POST /api/v1/me/redeems/:id/cards': { id: 'redeem', body: { verifyToken: 'vt_' + 'x'.repeat(20) } },
  'GET /api/v1/hosts/:id': { id: 'host' },
  'DELETE /api/v1/hosts/:id': { id: 'host' },
  'GET /api/v1/hosts/:id/engines': { id: 'host' },
  'GET /api/v1/hosts/:id/directories': { id: 'host' },
  'POST /api/v1/hosts/:id/refresh': { id: 'host' },
  'PATCH /api/v1/hosts/:id/remark': { id: 'host', body: { remark: 'mine now' } },
  'POST /api/v1/hosts/:id/model-config': { id: 'host', body: { configId: null } },
  'POST /api/v1/agents/:id/favorite': { id: 'agent' },
  'DELETE /api/v1/agents/:id/favorite': { id: 'agent' },
  'GET /api/v1/agents/:id/manage': { id: 'agent' },
  'PATCH /api/v1/agents/:id': { id: 'agent', body: { desc: 'taken over' } },
  'DELETE /api/v1/agents/:id': { id: 'agent' },
  'GET /api/v1/agents/:id/stats': { id: 'agent' },
  'GET /api/v1/agents/:id/share-link': { id: 'agent' },
  'POST /api/v1/agents/:id/share-link/refresh': { id: 'agent' },
  'GET /api/v1/agents/:id/invites': { id: 'agent' },
  'POST /api/v1/agents/:id/invites/refresh': { id: 'agent' },
  'DELETE /api/v1/agents/:id/invites/:userId': { id: 'agent' },
  'POST /api/v1/invites/:token/decide': { exempt: 'the token is the capability itself (test/agents-share.test.ts)' },
  'GET /api/v1/sessions/:id': { id: 'session' },
  'PATCH /api/v1/sessions/:id': { id: 'session', body: { title: 'taken over' } },
  'DELETE /api/v1/sessions/:id': { id: 'session' },
  'GET /api/v1/sessions/:id/messages': { id: 'session' },
  'POST /api/v1/sessions/:id/messages': { id: 'session', body: { content: 'hello from someone else' } },
  'POST /api/v1/sessions/:id/abort': { id: 'session' },
  'GET /api/v1/sessions/:id/cost': { id: 'session' },
  'GET /api/v1/sessions/:id/queue': { id: 'session' },
  'DELETE /api/v1/sessions/:id/queue/:taskId': { id: 'session' },
  'GET /api/v1/sessions/:id/events': { id: 'session' },
  'GET /api/v1/model-configs/:id': { id: 'config' },
  'PATCH /api/v1/model-configs/:id': { id: 'config', body: { name: 'taken over' } },
  'DELETE /api/v1/model-configs/:id': { id: 'config' },
};

let t: TestHub;
let routes: Array<{ method: string; path: string; auth: string }>;
before(async () => {
  t = await startTestHub();
  routes = (t.hub.routes as Array<{ method: string; path: string; auth: string }>).filter((r) => r.auth === 'user' || r.auth === 'admin');
});
after(() => t.close());

// Ids are encoded: an agent id holds a '/' (owner/name).
const fill = (path: string, ids: Record<string, string> = {}) => path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(ids[name] ?? 'x_1'));
const call = (method: string, path: string, token?: string, body?: unknown) => t.api(method, path, { token, body: body ?? (method === 'GET' || method === 'DELETE' ? undefined : {}) });

test('every route that needs a principal: no credentials → 401; a deleted key → 401; an expired JWT → 401 4011', async () => {
  const u = await t.user();
  const extra = (await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: 'doomed' } })).body.data;
  assert.equal((await t.api('DELETE', `/api/v1/me/keys/${extra.id}`, { token: u.key })).status, 200);
  const expired = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id).setIssuer('agent-hub')
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(t.hub.ctx.secrets.jwtKey);
  assert.ok(routes.length > 80, `${routes.length} routes`);
  for (const r of routes) {
    const path = fill(r.path);
    const none = await call(r.method, path);
    assert.equal(none.status, 401, `${r.method} ${r.path} without credentials: ${none.status} ${none.text}`);
    const deleted = await call(r.method, path, extra.key);
    assert.equal(deleted.status, 401, `${r.method} ${r.path} with a deleted key: ${deleted.status}`);
    const old = await call(r.method, path, expired);
    assert.deepEqual([old.status, old.body.code], [401, '4011'], `${r.method} ${r.path} with an expired JWT`);
  }
});

test('every administrator route: a normal user → 403 4031', async () => {
  const u = await t.user();
  for (const r of routes.filter((x) => x.auth === 'admin')) {
    const res = await call(r.method, fill(r.path), u.key);
    assert.deepEqual([res.status, res.body.code], [403, '4031'], `${r.method} ${r.path}`);
  }
});

test('every user route naming a resource: another account\'s → 404, and the owner\'s resource is unchanged', async () => {
  const a = await t.user('owner');
  const b = await t.user('stranger');
  const hostId = await seedHost(t, a.id);
  const made = async (method: string, path: string, body: unknown) => {
    const r = await t.api(method, path, { token: a.key, body });
    assert.ok(r.status < 300, `${path}: ${r.status} ${r.text}`);
    return r.body.data.id as string;
  };
  const agentId = await made('POST', '/api/v1/agents', { name: 'private-one', scope: 'private', hostId, engine: 'claude-code', workDir: '' });
  // A member of the owner's agent: removing a member is only the owner's to do (a stranger naming
  // itself, no member, would get 404 from any code).
  const member = await t.user('member');
  const link = (await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/share-link`, { token: a.key })).body.data.token;
  assert.equal((await t.api('POST', `/api/v1/invites/${link}/decide`, { token: member.key, body: { accept: true } })).status, 200);
  const ids: Record<Kind, string> = {
    key: await made('POST', '/api/v1/me/keys', { name: 'second' }),
    order: await made('POST', '/api/v1/orders/token-pack', { payMethod: 'alipay' }),
    redeem: await made('POST', '/api/v1/store/redeem', { productId: 'coffee-voucher' }),
    host: hostId,
    agent: agentId,
    session: await made('POST', '/api/v1/sessions', { agentId }),
    config: await made('POST', '/api/v1/model-configs', { name: 'c', apiType: 'anthropic', baseUrl: 'https://api.example.com', apiKey: 'sk-owner-0000', modelName: 'm' }),
    missing: 'x_1',
  };
  const withParams = routes.filter((r) => r.auth === 'user' && r.path.includes(':'));
  const unlisted = withParams.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in OWNED));
  assert.deepEqual(unlisted, [], 'a route with a path parameter needs an entry in OWNED (its isolation, decided on purpose)');
  // Reads and harmless writes first, removals last, so every call meets the owner's resource still there.
  const order = (m: string) => (m === 'DELETE' ? 1 : 0);
  for (const r of [...withParams].sort((x, y) => order(x.method) - order(y.method))) {
    const entry = OWNED[`${r.method} ${r.path}`];
    if ('exempt' in entry) continue;
    const path = fill(r.path, { id: ids[entry.id], userId: member.id, taskId: 'tsk_x' });
    const res = await call(r.method, path, b.key, entry.body);
    assert.equal(res.status, 404, `${r.method} ${path} by another account: ${res.status} ${res.text}`);
    assert.doesNotMatch(res.body.message ?? '', /no endpoint/, `${r.method} ${path}: the route itself must be reached`);
  }
  // Nothing of the owner's moved.
  const mine = await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/manage`, { token: a.key });
  assert.equal(mine.status, 200, mine.text);
  assert.notEqual(JSON.stringify(mine.body.data).includes('taken over'), true);
  assert.equal((await t.api('GET', `/api/v1/sessions/${ids.session}`, { token: a.key })).status, 200);
  assert.equal((await t.api('GET', `/api/v1/orders/${ids.order}`, { token: a.key })).body.data.status, 'pending');
  assert.equal((await t.api('GET', '/api/v1/me/keys', { token: a.key })).body.data.items.length, 2);
  assert.equal((await t.api('GET', `/api/v1/model-configs/${ids.config}`, { token: a.key })).body.data.name, 'c');
  const members = (await t.api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/invites`, { token: a.key })).body.data.items;
  assert.deepEqual(members.map((m: { userId: string }) => m.userId), [member.id], 'the member is still there');
});
