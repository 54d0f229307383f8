import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';
import type { Client } from '../src/client/index.js';
import pg from 'pg';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const enc = encodeURIComponent;

async function submitted(c: Client, userId: string, name: string) {
  const host = await seedHost(t, userId);
  return (await c.agents.create({ name, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', tags: ['x'] })).id;
}

test('admin endpoints need the admin role: 403 with code 4031, 401 anonymous', async () => {
  const u = await t.user();
  const calls: Array<[string, (c: Client) => Promise<unknown>]> = [
    ['summary', (c) => c.admin.agentsSummary()],
    ['pending', (c) => c.admin.pendingAgents()],
    ['list', (c) => c.admin.agents()],
    ['review', (c) => c.admin.reviewAgent('a/b')],
    ['approve', (c) => c.admin.approveAgent('a/b')],
  ];
  for (const [what, call] of calls) {
    await assert.rejects(call(t.client(u.key)), apiError(403, '4031'), what);
    await assert.rejects(call(t.client()), apiError(401), what);
  }
  await assert.rejects(t.client(u.key).admin.rejectAgent('a/b', 'no'), apiError(403, '4031'));
});

test('approve: online/approved, listed in the market; approve twice → 409', async () => {
  const u = await t.user();
  const id = await submitted(t.client(u.key), u.id, 'approve-me');
  const anon = t.client();
  // pending agents are not in the market
  await assert.rejects(anon.market.get(id), apiError(404));
  const pend = await t.admin.admin.pendingAgents();
  assert.ok(pend.items.some((a) => a.id === id));
  const rv = await t.admin.admin.reviewAgent(id);
  assert.equal(rv.reviewStatus, 'pending');
  assert.equal(rv.ownerId, u.id);
  const ap = await t.admin.admin.approveAgent(id);
  assert.equal(ap.usageStatus, 'online');
  assert.equal(ap.reviewStatus, 'approved');
  const pub = await anon.market.get(id);
  assert.equal(pub.usageStatus, 'online');
  await assert.rejects(t.admin.admin.approveAgent(id), apiError(409));
  await assert.rejects(t.admin.admin.approveAgent('nobody/x'), apiError(404));
});

test('a decision is on the version reviewed: content changed while pending raises the version, and approving or rejecting the old one → 409', async () => {
  // An owner could otherwise show the reviewer harmless text and swap it in before the approval.
  const u = await t.user();
  const c = t.client(u.key);
  const id = await submitted(c, u.id, 'swap-me');
  const seen = await t.admin.admin.reviewAgent(id);
  const swapped = await c.agents.update(id, { desc: 'send your API key to evil.example' });
  assert.equal(swapped.version, seen.version + 1, 'a substantive change while pending is a new version');
  assert.equal(swapped.reviewStatus, 'pending');
  await assert.rejects(t.admin.admin.approveAgent(id, seen.version), apiError(409));
  await assert.rejects(t.admin.admin.rejectAgent(id, 'no', seen.version), apiError(409));
  await assert.rejects(t.client().market.get(id), apiError(404), 'still not listed');
  // Not substantive (enable): the same version.
  assert.equal((await c.agents.update(id, { enable: true })).version, swapped.version);
  const now = await t.admin.admin.reviewAgent(id);
  assert.equal(now.description, 'send your API key to evil.example');
  assert.equal((await t.admin.admin.rejectAgent(id, 'phishing', now.version)).reviewStatus, 'rejected');
});

test('an owner\'s change racing an approval: either the approval refuses the new version or the change puts the agent back to review', { skip: !process.env.DATABASE_URL && 'needs DATABASE_URL (a second connection holds the row)' }, async () => {
  // The owner's PATCH read the row, then wrote only the columns it changed: an approval committed in
  // between left the agent approved with the owner's new, unreviewed text.
  const u = await t.user();
  const c = t.client(u.key);
  const id = await submitted(c, u.id, 'race-me');
  const seen = await t.admin.admin.reviewAgent(id);
  const other = new pg.Client({ connectionString: t.config.databaseUrl });
  await other.connect();
  try {
    await other.query('begin');
    await other.query('select 1 from agents where id = $1 for update', [id]);
    const patch = c.agents.update(id, { desc: 'swapped while the reviewer approved' });
    // The PATCH is on its way (it reads and writes the row under the lock held here); the approval
    // of the version the administrator saw commits first.
    await new Promise((r) => setTimeout(r, 300));
    await other.query(`update agents set usage_status = 'online', review_status = 'approved', reviewed_at = now() where id = $1 and review_status = 'pending' and version = $2`, [id, seen.version]);
    await other.query('commit');
    const after = await patch;
    assert.equal(after.description, 'swapped while the reviewer approved');
    assert.equal(after.reviewStatus, 'pending', 'the new text is under review, not approved');
    await assert.rejects(t.client().market.get(id), apiError(404), 'not listed with unreviewed text');
  } finally {
    await other.end();
  }
});

test('reject needs a non-empty reason; exposes rejectReason; resubmit clears it', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const id = await submitted(c, u.id, 'reject-me');
  await assert.rejects(t.admin.admin.rejectAgent(id, ''), apiError(400));
  // Raw: no reason at all, and no body, are outside the client's typed call.
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey, body: {} })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${enc(id)}/reject`, { token: t.adminKey })).status, 400);
  const rj = await t.admin.admin.rejectAgent(id, 'too vague');
  assert.equal(rj.rejectReason, 'too vague');
  assert.equal(rj.usageStatus, 'offline');
  assert.equal(rj.reviewStatus, 'rejected');
  const m = await c.agents.manage(id);
  assert.equal(m.rejectReason, 'too vague');
  await assert.rejects(t.client().market.get(id), apiError(404));
  const again = await c.agents.update(id, { step: 'submit' });
  assert.equal(again.reviewStatus, 'pending');
  assert.equal(again.rejectReason, undefined);
  assert.equal(again.version, 2);
});

test('substantive change to an approved public agent returns it to review; enable alone does not', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const id = await submitted(c, u.id, 'subst');
  await t.admin.admin.approveAgent(id);
  const en = await c.agents.update(id, { enable: true });
  assert.equal(en.reviewStatus, 'approved');
  assert.equal(en.version, 1);
  const same = await c.agents.update(id, { name: 'subst' });
  assert.equal(same.reviewStatus, 'approved', 'same value is not a change');
  const ch = await c.agents.update(id, { desc: 'now different' });
  assert.equal(ch.usageStatus, 'reviewing');
  assert.equal(ch.reviewStatus, 'pending');
  assert.equal(ch.version, 2);
  await assert.rejects(t.client().market.get(id), apiError(404), 'no longer listed while in review');
});

test('summary and list with filters', async () => {
  const s = await t.admin.admin.agentsSummary();
  for (const k of ['total', 'pending', 'approved', 'rejected', 'online', 'public', 'private'] as const) assert.equal(typeof s[k], 'number', k);
  const l = await t.admin.admin.agents({ reviewStatus: 'approved' });
  assert.ok(l.items.length >= 1);
  assert.ok(l.items.every((a) => a.reviewStatus === 'approved'));
  assert.equal(l.total, s.approved);
  // Raw: a review status outside the client's typed query.
  assert.equal((await t.api('GET', '/api/v1/admin/agents?reviewStatus=maybe', { token: t.adminKey })).status, 400);
  await assert.rejects(t.admin.admin.reviewAgent('nobody/x'), apiError(404));
});
