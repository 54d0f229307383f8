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
