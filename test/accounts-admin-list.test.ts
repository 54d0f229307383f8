// GET /api/v1/admin/users and /admin/users/summary (src/accounts/service.ts listUsers, usersSummary).
// Found by the mutation audit (fifty-fourth session): the keyword's escaping of LIKE wildcards, its
// match by id and e-mail, the role filter, and each count of the summary had no test that failed
// without them (the tests there searched for unique names only).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const sql = (q: string, args: unknown[]) => t.hub.ctx.em().getConnection().execute(q, args);
const names = async (q: Parameters<TestHub['admin']['admin']['users']>[0]) => (await t.admin.admin.users({ pageSize: 100, ...q })).items.map((u) => u.name).sort();

test('a keyword is matched literally: _ and % are characters, not wildcards', async () => {
  for (const name of ['lit_eral', 'litXeral', 'per%cent', 'percent']) await t.admin.admin.createUser({ name });
  assert.deepEqual(await names({ keyword: 'lit_e' }), ['lit_eral']);
  assert.deepEqual(await names({ keyword: 'r%c' }), ['per%cent']);
});

test("a keyword finds a user by its exact id and by part of its e-mail", async () => {
  const u = await t.admin.admin.createUser({ name: 'found-by-id' });
  assert.deepEqual((await t.admin.admin.users({ keyword: u.user.id })).items.map((x) => x.id), [u.user.id]);
  const m = await t.admin.admin.createUser({ name: 'found-by-mail' });
  await sql(`update users set email = ? where id = ?`, ['Someone.Unusual@example.org', m.user.id]);
  assert.deepEqual(await names({ keyword: 'unusual@EXAMPLE' }), ['found-by-mail']);
  const near = await t.admin.admin.createUser({ name: 'near-miss-mail' });
  await sql(`update users set email = ? where id = ?`, ['someoneXunusual@example.org', near.user.id]);
  assert.deepEqual(await names({ keyword: 'someone_unusual@' }), [], 'an underscore in the e-mail keyword is literal too');
});

test('the role filter lists administrators only', async () => {
  await t.admin.admin.createUser({ name: 'role-admin', role: 'admin' });
  await t.admin.admin.createUser({ name: 'role-user' });
  const admins = (await t.admin.admin.users({ role: 'admin', pageSize: 100 })).items;
  assert.ok(admins.some((u) => u.name === 'role-admin'));
  assert.deepEqual(admins.filter((u) => u.role !== 'admin'), []);
});

test('the summary counts administrators, new accounts by day and week, and active plans only', async () => {
  const before = await t.admin.admin.usersSummary();
  await t.admin.admin.createUser({ name: 'sum-admin', role: 'admin' });
  const days3 = await t.admin.admin.createUser({ name: 'sum-3-days' });
  const days10 = await t.admin.admin.createUser({ name: 'sum-10-days' });
  const active = await t.admin.admin.createUser({ name: 'sum-active' });
  const lapsed = await t.admin.admin.createUser({ name: 'sum-lapsed' });
  await sql(`update users set created_at = now() - interval '3 days' where id = ?`, [days3.user.id]);
  await sql(`update users set created_at = now() - interval '10 days' where id = ?`, [days10.user.id]);
  await t.admin.admin.setPlan(active.user.id, { planId: 'pro', planExpireAt: Date.now() + 86_400_000 });
  await t.admin.admin.setPlan(lapsed.user.id, { planId: 'pro', planExpireAt: Date.now() + 86_400_000 });
  await sql(`update users set plan_expire_at = now() - interval '1 hour' where id = ?`, [lapsed.user.id]);
  const after = await t.admin.admin.usersSummary();
  assert.deepEqual(
    { total: after.total - before.total, admins: after.admins - before.admins, newToday: after.newToday - before.newToday, newThisWeek: after.newThisWeek - before.newThisWeek, subscribed: after.subscribed - before.subscribed },
    { total: 5, admins: 1, newToday: 3, newThisWeek: 4, subscribed: 1 },
  );
});
