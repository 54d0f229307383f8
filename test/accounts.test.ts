import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { SignJWT } from 'jose';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('GET /me needs credentials', async () => {
  const r = await t.api('GET', '/api/v1/me');
  assert.equal(r.status, 401);
  assert.equal(r.body.data, null);
  assert.equal(typeof r.body.code, 'string');
  const bad = await t.api('GET', '/api/v1/me', { token: 'ahk_nope' });
  assert.equal(bad.status, 401);
  const junk = await t.api('GET', '/api/v1/me', { headers: { authorization: 'Basic abc' } });
  assert.equal(junk.status, 401);
});

test('admin creates a user; the user reads /me with the returned key', async () => {
  const u = await t.user('alice');
  assert.match(u.key, /^ahk_/);
  const r = await t.api('GET', '/api/v1/me', { token: u.key });
  assert.equal(r.status, 200);
  assert.deepEqual([r.body.code, r.body.message], ['0', 'ok']);
  assert.equal(r.body.data.name, 'alice');
  assert.equal(r.body.data.role, 'user');
  assert.match(r.body.data.createdAt, /^\d{4}-\d\d-\d\dT/);
});

test('keys: create, list without secret, refresh invalidates old value, delete invalidates', async () => {
  const u = await t.user();
  const c = await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: 'ci' } });
  assert.equal(c.status, 201);
  const k1 = c.body.data.key as string;
  assert.match(k1, /^ahk_/);
  assert.equal((await t.api('GET', '/api/v1/me', { token: k1 })).status, 200);

  const list = await t.api('GET', '/api/v1/me/keys', { token: u.key });
  assert.equal(list.body.data.total, 2);
  assert.ok(!JSON.stringify(list.body).includes(k1), 'list must not reveal a key');

  const ref = await t.api('POST', `/api/v1/me/keys/${c.body.data.id}/refresh`, { token: u.key });
  assert.equal(ref.status, 200);
  const k2 = ref.body.data.key as string;
  assert.notEqual(k1, k2);
  assert.equal((await t.api('GET', '/api/v1/me', { token: k1 })).status, 401);
  assert.equal((await t.api('GET', '/api/v1/me', { token: k2 })).status, 200);

  const del = await t.api('DELETE', `/api/v1/me/keys/${c.body.data.id}`, { token: u.key });
  assert.equal(del.status, 200);
  assert.equal((await t.api('GET', '/api/v1/me', { token: k2 })).status, 401);
});

test("another account's key is a 404", async () => {
  const a = await t.user();
  const b = await t.user();
  const c = await t.api('POST', '/api/v1/me/keys', { token: a.key, body: { name: 'x' } });
  const r = await t.api('DELETE', `/api/v1/me/keys/${c.body.data.id}`, { token: b.key });
  assert.equal(r.status, 404);
  assert.equal((await t.api('POST', `/api/v1/me/keys/${c.body.data.id}/refresh`, { token: b.key })).status, 404);
});

test('key create validates its body', async () => {
  const u = await t.user();
  assert.equal((await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: '' } })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: 'a', extra: 1 } })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/me/keys', { token: u.key, raw: '{"name":', headers: { 'content-type': 'application/json' } })).status, 400);
  const ct = await t.api('POST', '/api/v1/me/keys', { token: u.key, raw: '{"name":"a"}', headers: { 'content-type': 'text/plain' } });
  assert.equal(ct.status, 400);
  assert.equal(ct.body.code, '4002');
});

test('admin paths: 403 with 4031 for users, 401 without credentials', async () => {
  const u = await t.user();
  for (const [m, p] of [['GET', '/api/v1/admin/users'], ['GET', '/api/v1/admin/users/summary'], ['POST', '/api/v1/admin/users'], ['DELETE', '/api/v1/admin/users/x']] as const) {
    const r = await t.api(m, p, { token: u.key, body: m === 'POST' ? { name: 'x' } : undefined });
    assert.equal(r.status, 403, `${m} ${p}`);
    assert.equal(r.body.code, '4031');
    assert.equal((await t.api(m, p)).status, 401);
  }
});

test('admin lists, summarises and deletes users; a deleted user is refused at once', async () => {
  const u = await t.user('bob-listed');
  const list = await t.api('GET', '/api/v1/admin/users?keyword=bob-listed', { token: t.adminKey });
  assert.equal(list.status, 200);
  assert.equal(list.body.data.total, 1);
  assert.equal(list.body.data.hasMore, false);
  const s = await t.api('GET', '/api/v1/admin/users/summary', { token: t.adminKey });
  assert.ok(s.body.data.total >= 2);
  assert.ok(s.body.data.admins >= 1);
  assert.equal((await t.api('GET', '/api/v1/me', { token: u.key })).status, 200);
  assert.equal((await t.api('DELETE', `/api/v1/admin/users/${u.id}`, { token: t.adminKey })).status, 200);
  assert.equal((await t.api('GET', '/api/v1/me', { token: u.key })).status, 401);
  assert.equal((await t.api('DELETE', `/api/v1/admin/users/${u.id}`, { token: t.adminKey })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/admin/users?pageSize=0', { token: t.adminKey })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/admin/users', { token: t.adminKey, body: { name: 'x', role: 'root' } })).status, 400);
});

test('an expired JWT gives 401 with code 4011; a forged one 401', async () => {
  const exp = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_x').setIssuer('agent-hub').setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(t.hub.ctx.secrets.jwtKey);
  const r = await t.api('GET', '/api/v1/me', { token: exp });
  assert.equal(r.status, 401);
  assert.equal(r.body.code, '4011');
  const forged = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_x').setIssuer('agent-hub').setExpirationTime('1h').sign(new Uint8Array(32));
  const f = await t.api('GET', '/api/v1/me', { token: forged });
  assert.equal(f.status, 401);
  assert.equal(f.body.code, '4010');
});
