import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const enc = encodeURIComponent;

async function submitted(key: string, userId: string, name: string) {
  const host = await seedHost(t, userId);
  const r = await t.api('POST', '/api/v1/agents', { token: key, body: { name, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', tags: ['x'] } });
  assert.equal(r.status, 201, r.text);
  return r.body.data.id as string;
}

test('admin endpoints need the admin role: 403 with code 4031, 401 anonymous', async () => {
  const u = await t.user();
  for (const [m, p] of [['GET', '/summary'], ['GET', '/pending'], ['GET', ''], ['GET', '/a%2Fb/review'], ['POST', '/a%2Fb/approve']] as const) {
    const r = await t.api(m, `/api/v1/admin/agents${p}`, { token: u.key });
    assert.equal(r.status, 403, p);
    assert.equal(r.body.code, '4031');
    assert.equal((await t.api(m, `/api/v1/admin/agents${p}`)).status, 401);
  }
  const rj = await t.api('POST', '/api/v1/admin/agents/a%2Fb/reject', { token: u.key, body: { reason: 'no' } });
  assert.equal(rj.body.code, '4031');
});

test('approve: online/approved, listed in the market; approve twice → 409', async () => {
  const u = await t.user();
  const id = await submitted(u.key, u.id, 'approve-me');
  // pending agents are not in the market
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(id)}`)).status, 404);
  const pend = await t.api('GET', '/api/v1/admin/agents/pending', { token: t.adminKey });
  assert.ok(pend.body.data.items.some((a: any) => a.id === id));
  const rv = await t.api('GET', `/api/v1/admin/agents/${enc(id)}/review`, { token: t.adminKey });
  assert.equal(rv.status, 200);
  assert.equal(rv.body.data.reviewStatus, 'pending');
  assert.equal(rv.body.data.ownerId, u.id);
  const ap = await t.api('POST', `/api/v1/admin/agents/${enc(id)}/approve`, { token: t.adminKey });
  assert.equal(ap.status, 200);
  assert.equal(ap.body.data.usageStatus, 'online');
  assert.equal(ap.body.data.reviewStatus, 'approved');
  const pub = await t.api('GET', `/api/v1/agents/${enc(id)}`);
  assert.equal(pub.status, 200);
  assert.equal(pub.body.data.usageStatus, 'online');
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/approve`, { token: t.adminKey })).status, 409);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/nobody%2Fx/approve`, { token: t.adminKey })).status, 404);
});

test('reject needs a non-empty reason; exposes rejectReason; resubmit clears it', async () => {
  const u = await t.user();
  const id = await submitted(u.key, u.id, 'reject-me');
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey, body: { reason: '' } })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey, body: {} })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey })).status, 400);
  const rj = await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey, body: { reason: 'too vague' } });
  assert.equal(rj.status, 200);
  assert.equal(rj.body.data.rejectReason, 'too vague');
  assert.equal(rj.body.data.usageStatus, 'offline');
  assert.equal(rj.body.data.reviewStatus, 'rejected');
  const m = await t.api('GET', `/api/v1/agents/${enc(id)}/manage`, { token: u.key });
  assert.equal(m.body.data.rejectReason, 'too vague');
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(id)}`)).status, 404);
  const again = await t.api('PATCH', `/api/v1/agents/${enc(id)}`, { token: u.key, body: { step: 'submit' } });
  assert.equal(again.body.data.reviewStatus, 'pending');
  assert.equal(again.body.data.rejectReason, undefined);
  assert.equal(again.body.data.version, 2);
});

test('substantive change to an approved public agent returns it to review; enable alone does not', async () => {
  const u = await t.user();
  const id = await submitted(u.key, u.id, 'subst');
  await t.api('POST', `/api/v1/admin/agents/${enc(id)}/approve`, { token: t.adminKey });
  const en = await t.api('PATCH', `/api/v1/agents/${enc(id)}`, { token: u.key, body: { enable: true } });
  assert.equal(en.body.data.reviewStatus, 'approved');
  assert.equal(en.body.data.version, 1);
  const same = await t.api('PATCH', `/api/v1/agents/${enc(id)}`, { token: u.key, body: { name: 'subst' } });
  assert.equal(same.body.data.reviewStatus, 'approved', 'same value is not a change');
  const ch = await t.api('PATCH', `/api/v1/agents/${enc(id)}`, { token: u.key, body: { desc: 'now different' } });
  assert.equal(ch.body.data.usageStatus, 'reviewing');
  assert.equal(ch.body.data.reviewStatus, 'pending');
  assert.equal(ch.body.data.version, 2);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(id)}`)).status, 404, 'no longer listed while in review');
});

test('summary and list with filters', async () => {
  const s = await t.api('GET', '/api/v1/admin/agents/summary', { token: t.adminKey });
  assert.equal(s.status, 200);
  for (const k of ['total', 'pending', 'approved', 'rejected', 'online', 'public', 'private']) assert.equal(typeof s.body.data[k], 'number', k);
  const l = await t.api('GET', '/api/v1/admin/agents?reviewStatus=approved', { token: t.adminKey });
  assert.ok(l.body.data.items.length >= 1);
  assert.ok(l.body.data.items.every((a: any) => a.reviewStatus === 'approved'));
  assert.equal(l.body.data.total, s.body.data.approved);
  assert.equal((await t.api('GET', '/api/v1/admin/agents?reviewStatus=maybe', { token: t.adminKey })).status, 400);
  assert.equal((await t.api('GET', '/api/v1/admin/agents/nobody%2Fx/review', { token: t.adminKey })).status, 404);
});
