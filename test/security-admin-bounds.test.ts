// Audit (administrator tools): numbers the request schemas accept but the
// database cannot hold answer 500 instead of a 400 envelope.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

async function pendingAgent() {
  const u = await t.user();
  const host = await seedHost(t, u.id);
  const a = await t.client(u.key).agents.create({ name: 'to-review-' + Math.random().toString(36).slice(2, 8), scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', tags: ['x'] });
  return a.id;
}

test('approve / reject with a version past 2^31 − 1 is a 400, not a 500 (review.ts casts it to int)', async () => {
  const id = await pendingAgent();
  const path = `/api/v1/admin/agents/${encodeURIComponent(id)}`;
  const approve = await t.api('POST', `${path}/approve`, { token: t.adminKey, body: { version: 2 ** 31 } });
  assert.equal(approve.status, 400, `approve answered ${approve.status} ${approve.text}`);
  const reject = await t.api('POST', `${path}/reject`, { token: t.adminKey, body: { reason: 'no', version: 2 ** 40 } });
  assert.equal(reject.status, 400, `reject answered ${reject.status} ${reject.text}`);
  assert.equal((await t.admin.admin.reviewAgent(id)).reviewStatus, 'pending');
});

test('PATCH /admin/users/{id}/plan with planExpireAt past year 9999 is a 400, not a 500 (the schema allows up to 8.64e15)', async () => {
  const u = await t.user();
  for (const at of [253_402_300_800_000 /* 10000-01-01 */, 8_640_000_000_000_000 /* the schema's maximum */]) {
    const r = await t.api('PATCH', `/api/v1/admin/users/${u.id}/plan`, { token: t.adminKey, body: { planId: 'pro', planExpireAt: at } });
    assert.equal(r.status, 400, `planExpireAt ${at} answered ${r.status} ${r.text}`);
  }
});
