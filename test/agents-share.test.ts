import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';
import { resolveUsableAgent } from '../src/agents/usage.js';
import { HubError } from '../src/errors.js';
import type { Client } from '../src/client/index.js';

let t: TestHub;
let owner: { id: string; key: string };
let own: Client;
let agentId: string;

before(async () => {
  t = await startTestHub();
  owner = await t.user('sharer');
  own = t.client(owner.key);
  const host = await seedHost(t, owner.id);
  agentId = (await own.agents.create({ name: 'private-helper', hostId: host, engine: 'claude-code' })).id;
});
after(() => t.close());

const resolveErr = async (userId: string, id: string) => {
  try {
    await resolveUsableAgent(t.hub.ctx, userId, id);
    return 'ok';
  } catch (e) {
    return e instanceof HubError ? e.kind : String(e);
  }
};

test('share link: stable until refreshed; the old token then 404s', async () => {
  const anon = t.client();
  const l1 = await own.agents.shareLink(agentId);
  assert.equal(l1.kind, 'link');
  assert.equal(l1.url, `/api/v1/invites/${l1.token}`);
  const l2 = await own.agents.shareLink(agentId);
  assert.equal(l2.token, l1.token);
  const r = await own.agents.refreshShareLink(agentId);
  assert.notEqual(r.token, l1.token);
  await assert.rejects(anon.invites.get(l1.token), apiError(404));
  const peek = await anon.invites.get(r.token);
  assert.equal(peek.agent.id, agentId);
  assert.equal(peek.joined, false);
});

test('accepting a share link shares the private agent: visible, sharedWithMe, usable', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  await assert.rejects(c.market.get(agentId), apiError(404));
  assert.equal(await resolveErr(u.id, agentId), 'NOT_FOUND');
  const { token } = await own.agents.shareLink(agentId);
  await assert.rejects(t.client().invites.decide(token, true), apiError(401));
  // Raw: answers that are not a boolean, outside the client's typed body.
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: { accept: 'yes' } })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: {} })).status, 400);
  const no = await c.invites.decide(token, false);
  assert.deepEqual([no.accepted, no.sharedWithMe], [false, false]);
  await assert.rejects(c.market.get(agentId), apiError(404));
  const yes = await c.invites.decide(token, true);
  assert.deepEqual([yes.accepted, yes.sharedWithMe, yes.agentId], [true, true, agentId]);
  const seen = await c.market.get(agentId);
  assert.equal(seen.sharedWithMe, true);
  const mine = await c.market.list({ sharedWithMe: true });
  assert.deepEqual(mine.items.map((a) => a.id), [agentId]);
  assert.equal((await resolveErr(u.id, agentId)), 'ok');
  const got = await resolveUsableAgent(t.hub.ctx, u.id, agentId);
  assert.equal(got.ownerId, owner.id);
  assert.equal(got.engine, 'claude-code');
  // the owner deciding on its own link is a conflict
  await assert.rejects(own.invites.decide(token, true), apiError(409));
  // still not manageable by the member
  await assert.rejects(c.agents.manage(agentId), apiError(404));
});

test('invitation tokens are single-use; members are listed and can be removed', async () => {
  const inv = await own.agents.invites(agentId);
  const tok = inv.token;
  const before = inv.total;
  const a = await t.user('invitee');
  const b = await t.user();
  const ca = t.client(a.key);
  await ca.invites.decide(tok, true);
  await assert.rejects(t.client(b.key).invites.decide(tok, true), apiError(404), 'used up');
  const after1 = await own.agents.invites(agentId);
  assert.equal(after1.total, before + 1);
  const row = after1.items.find((m) => m.userId === a.id)!;
  assert.deepEqual([row.name, row.via], ['invitee', 'invite']);
  assert.notEqual(after1.token, tok);
  const ref = await own.agents.refreshInvite(agentId);
  assert.notEqual(ref.token, after1.token);
  await assert.rejects(t.client().invites.get(after1.token), apiError(404));

  assert.equal((await ca.market.get(agentId)).sharedWithMe, true);
  assert.equal((await own.agents.removeMember(agentId, a.id)).removed, true);
  await assert.rejects(ca.market.get(agentId), apiError(404), 'removal takes effect at once');
  assert.equal(await resolveErr(a.id, agentId), 'NOT_FOUND');
  await assert.rejects(own.agents.removeMember(agentId, a.id), apiError(404));
  await assert.rejects(t.client().invites.get('nope'), apiError(404));
});

test('an invitation token accepted by many at once lets exactly one in; the others get 404', async () => {
  // It was looked up outside the transaction and used up inside it without checking the update took
  // a row: every racer passed the lookup and joined (eight of eight, on PostgreSQL).
  const tok = (await own.agents.invites(agentId)).token;
  const before = (await own.agents.invites(agentId)).total;
  const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => t.user(`racer-${i}`)));
  const answers = await Promise.allSettled(racers.map((u) => t.client(u.key).invites.decide(tok, true)));
  assert.equal(answers.filter((a) => a.status === 'fulfilled').length, 1, JSON.stringify(answers.map((a) => a.status)));
  for (const a of answers) if (a.status === 'rejected') assert.equal((a.reason as { status?: number }).status, 404);
  assert.equal((await own.agents.invites(agentId)).total, before + 1);
});

test('resolveUsableAgent: owner ok; disabled or unbound → AGENT_UNUSABLE; deleting the agent drops shares', async () => {
  assert.equal(await resolveErr(owner.id, agentId), 'ok');
  const u = await t.user();
  const c = t.client(u.key);
  const { token } = await own.agents.shareLink(agentId);
  await c.invites.decide(token, true);
  await own.agents.update(agentId, { enable: false });
  assert.equal(await resolveErr(u.id, agentId), 'AGENT_UNUSABLE');
  assert.equal(await resolveErr(owner.id, agentId), 'AGENT_UNUSABLE');
  await own.agents.update(agentId, { enable: true, hostId: '', engine: '' });
  assert.equal(await resolveErr(owner.id, agentId), 'AGENT_UNUSABLE');
  assert.equal(await resolveErr(u.id, 'nobody/none'), 'NOT_FOUND');
  assert.equal(await own.agents.remove(agentId), undefined);
  // a deleted id is retired: the same name created again gets another id, not shared with the old member
  const again = await own.agents.create({ name: 'private-helper' });
  assert.equal(again.id, `${agentId}-2`);
  await assert.rejects(c.market.get(agentId), apiError(404));
  await assert.rejects(c.market.get(again.id), apiError(404));
});
