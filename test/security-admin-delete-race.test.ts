// Audit (admin endpoints, forty-fifth session): DELETE /api/v1/admin/users/{id} refuses only an administrator deleting
// itself (src/accounts/service.ts deleteUser). Two administrators deleting each other at the same
// time both succeed: each request was authenticated before the other's delete committed, and the
// delete statement does not check that its actor still exists. A hub whose only administrators are
// those two is left without any (the bootstrap key file is written only for an empty database).
// The delete now locks both rows in id order and reads its actor under the lock: the second finds
// its own account gone (401), so one of the two survives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('two administrators deleting each other at once: one of them survives', async () => {
  for (let round = 0; round < 5; round++) {
    const a = await t.admin.admin.createUser({ name: 'adm-a', role: 'admin' });
    const b = await t.admin.admin.createUser({ name: 'adm-b', role: 'admin' });
    const res = await Promise.all([
      t.api('DELETE', `/api/v1/admin/users/${b.user.id}`, { token: a.apiKey }),
      t.api('DELETE', `/api/v1/admin/users/${a.user.id}`, { token: b.apiKey }),
    ]);
    const left = (await t.admin.admin.users({ role: 'admin', pageSize: 100 })).items.filter((u) => u.id === a.user.id || u.id === b.user.id);
    assert.equal(left.length, 1, `round ${round}: answers ${res.map((r) => r.status).join(', ')}; administrators a and b left: ${left.length}`);
  }
});

test('an administrator cannot delete its own account: 409, and the account stays', async () => {
  const a = await t.admin.admin.createUser({ name: 'adm-self', role: 'admin' });
  const res = await t.api('DELETE', `/api/v1/admin/users/${a.user.id}`, { token: a.apiKey });
  assert.equal(res.status, 409);
  assert.equal((res.body as { code: string }).code, '4090');
  const left = (await t.admin.admin.users({ role: 'admin', pageSize: 100 })).items.filter((u) => u.id === a.user.id);
  assert.equal(left.length, 1);
});

test('an administrator demoted while its credential is cached deletes nobody: the role is read under the lock', async () => {
  const a = await t.admin.admin.createUser({ name: 'adm-demoted', role: 'admin' });
  const victim = await t.admin.admin.createUser({ name: 'kept-user' });
  // Warm the auth cache (30 s by default) with a's administrator role, then demote it behind the cache.
  assert.equal((await t.api('GET', '/api/v1/admin/users/summary', { token: a.apiKey })).status, 200);
  await t.hub.ctx.em().getConnection().execute(`update users set role = 'user' where id = ?`, [a.user.id]);
  const res = await t.api('DELETE', `/api/v1/admin/users/${victim.user.id}`, { token: a.apiKey });
  assert.equal(res.status, 401, `answered ${res.status}`);
  const left = (await t.admin.admin.users({ keyword: 'kept-user', pageSize: 100 })).items.filter((u) => u.id === victim.user.id);
  assert.equal(left.length, 1, 'the account stays');
});
