import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import { API_KEYS_PER_ACCOUNT } from '../src/account-caps.js';
import type { NewUserBody } from '../src/client/index.js';
import { SignJWT } from 'jose';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('GET /me needs credentials', async () => {
  // The failure envelope itself (data null, a string code): raw.
  const r = await t.api('GET', '/api/v1/me');
  assert.equal(r.status, 401);
  assert.equal(r.body.data, null);
  assert.equal(typeof r.body.code, 'string');
  await assert.rejects(t.client().me(), apiError(401));
  await assert.rejects(t.client('ahk_nope').me(), apiError(401));
  // A scheme other than Bearer: a header the client never sends.
  const junk = await t.api('GET', '/api/v1/me', { headers: { authorization: 'Basic abc' } });
  assert.equal(junk.status, 401);
});

test('admin creates a user; the user reads /me with the returned key', async () => {
  const u = await t.user('alice');
  assert.match(u.key, /^ahk_/);
  const me = await t.client(u.key).me();
  assert.equal(me.name, 'alice');
  assert.equal(me.role, 'user');
  assert.match(me.createdAt, /^\d{4}-\d\d-\d\dT/);
  // The success envelope itself (code '0', message 'ok'): raw.
  const r = await t.api('GET', '/api/v1/me', { token: u.key });
  assert.equal(r.status, 200);
  assert.deepEqual([r.body.code, r.body.message], ['0', 'ok']);
});

test('keys: create, list without secret, refresh invalidates old value, delete invalidates', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const made = await c.keys.create('ci');
  const k1 = made.key;
  assert.match(k1, /^ahk_/);
  await t.client(k1).me();

  const list = await c.keys.list();
  assert.equal(list.total, 2);
  assert.ok(!JSON.stringify(list).includes(k1), 'list must not reveal a key');

  const ref = await c.keys.refresh(made.id);
  const k2 = ref.key;
  assert.notEqual(k1, k2);
  await assert.rejects(t.client(k1).me(), apiError(401));
  await t.client(k2).me();

  assert.deepEqual(await c.keys.remove(made.id), { deleted: true });
  await assert.rejects(t.client(k2).me(), apiError(401));
});

test('the key list marks the key the request came with (`current`): a console knows which key it is signed in with', async () => {
  const u = await t.user();
  const other = await t.client(u.key).keys.create('other');
  const marked = async (key: string) => Object.fromEntries((await t.client(key).keys.list()).items.map((k) => [k.id, k.current]));
  const first = (await t.client(u.key).keys.list()).items.find((k) => k.id !== other.id)!;
  assert.deepEqual(await marked(u.key), { [first.id]: true, [other.id]: false });
  assert.deepEqual(await marked(other.key), { [first.id]: false, [other.id]: true });
  // A new or refreshed key's own answer is not a list: no mark there.
  assert.equal('current' in other, false);
});

test('an account holds at most API_KEYS_PER_ACCOUNT keys: one more is a 409 until one is deleted', async () => {
  // Each key is a row kept for good and a rate-limit budget of its own.
  const u = await t.user();
  const c = t.client(u.key);
  const made = [];
  for (let i = (await c.keys.list()).total; i < API_KEYS_PER_ACCOUNT; i++) made.push(await c.keys.create(`k${i}`));
  await assert.rejects(c.keys.create('one more'), apiError(409));
  assert.equal((await c.keys.list()).total, API_KEYS_PER_ACCOUNT);
  await c.keys.remove(made[0].id);
  await c.keys.create('room again');
});

test("another account's key is a 404", async () => {
  const a = await t.user();
  const b = t.client((await t.user()).key);
  const made = await t.client(a.key).keys.create('x');
  await assert.rejects(b.keys.remove(made.id), apiError(404));
  await assert.rejects(b.keys.refresh(made.id), apiError(404));
});

test('key create validates its body', async () => {
  const u = await t.user();
  await assert.rejects(t.client(u.key).keys.create(''), apiError(400));
  // An unknown field, broken JSON and a body that is not JSON: outside what the client sends.
  assert.equal((await t.api('POST', '/api/v1/me/keys', { token: u.key, body: { name: 'a', extra: 1 } })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/me/keys', { token: u.key, raw: '{"name":', headers: { 'content-type': 'application/json' } })).status, 400);
  const ct = await t.api('POST', '/api/v1/me/keys', { token: u.key, raw: '{"name":"a"}', headers: { 'content-type': 'text/plain' } });
  assert.equal(ct.status, 400);
  assert.equal(ct.body.code, '4002');
});

test('admin paths: 403 with 4031 for users, 401 without credentials', async () => {
  const u = await t.user();
  const calls = (c: ReturnType<TestHub['client']>) => ({
    'GET /admin/users': () => c.admin.users(),
    'GET /admin/users/summary': () => c.admin.usersSummary(),
    'POST /admin/users': () => c.admin.createUser({ name: 'x' }),
    'DELETE /admin/users/x': () => c.admin.deleteUser('x'),
  });
  const asUser = calls(t.client(u.key));
  const anon = calls(t.client());
  for (const name of Object.keys(asUser) as Array<keyof typeof asUser>) {
    await assert.rejects(asUser[name](), apiError(403, '4031'), name);
    await assert.rejects(anon[name](), apiError(401), name);
  }
});

test('admin lists, summarises and deletes users; a deleted user is refused at once', async () => {
  const u = await t.user('bob-listed');
  const admin = t.admin.admin;
  const list = await admin.users({ keyword: 'bob-listed' });
  assert.equal(list.total, 1);
  assert.equal(list.hasMore, false);
  const s = await admin.usersSummary();
  assert.ok(s.total >= 2);
  assert.ok(s.admins >= 1);
  await t.client(u.key).me();
  await admin.deleteUser(u.id);
  await assert.rejects(t.client(u.key).me(), apiError(401));
  await assert.rejects(admin.deleteUser(u.id), apiError(404));
  await assert.rejects(admin.users({ pageSize: 0 }), apiError(400));
  await assert.rejects(admin.createUser({ name: 'x', role: 'root' } as unknown as NewUserBody), apiError(400));
});

test('an expired JWT gives 401 with code 4011; a forged one 401', async () => {
  const exp = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_x').setIssuer('agent-hub').setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(t.hub.ctx.secrets.jwtKey);
  await assert.rejects(t.client(exp).me(), apiError(401, '4011'));
  const forged = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_x').setIssuer('agent-hub').setExpirationTime('1h').sign(new Uint8Array(32));
  await assert.rejects(t.client(forged).me(), apiError(401, '4010'));
});
