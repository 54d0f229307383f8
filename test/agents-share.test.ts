import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { resolveUsableAgent } from '../src/agents/usage.js';
import { HubError } from '../src/errors.js';

let t: TestHub;
let owner: { id: string; key: string };
let agentId: string;
const enc = encodeURIComponent;
const A = () => `/api/v1/agents/${enc(agentId)}`;

before(async () => {
  t = await startTestHub();
  owner = await t.user('sharer');
  const host = await seedHost(t, owner.id);
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'private-helper', hostId: host, engine: 'claude-code' } });
  agentId = c.body.data.id;
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
  const l1 = await t.api('GET', `${A()}/share-link`, { token: owner.key });
  assert.equal(l1.status, 200);
  assert.equal(l1.body.data.kind, 'link');
  assert.equal(l1.body.data.url, `/api/v1/invites/${l1.body.data.token}`);
  const l2 = await t.api('GET', `${A()}/share-link`, { token: owner.key });
  assert.equal(l2.body.data.token, l1.body.data.token);
  const r = await t.api('POST', `${A()}/share-link/refresh`, { token: owner.key });
  assert.notEqual(r.body.data.token, l1.body.data.token);
  assert.equal((await t.api('GET', `/api/v1/invites/${l1.body.data.token}`)).status, 404);
  const peek = await t.api('GET', `/api/v1/invites/${r.body.data.token}`);
  assert.equal(peek.status, 200);
  assert.equal(peek.body.data.agent.id, agentId);
  assert.equal(peek.body.data.joined, false);
});

test('accepting a share link shares the private agent: visible, sharedWithMe, usable', async () => {
  const u = await t.user();
  assert.equal((await t.api('GET', A(), { token: u.key })).status, 404);
  assert.equal(await resolveErr(u.id, agentId), 'NOT_FOUND');
  const { token } = (await t.api('GET', `${A()}/share-link`, { token: owner.key })).body.data;
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { body: { accept: true } })).status, 401);
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: { accept: 'yes' } })).status, 400);
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: {} })).status, 400);
  const no = await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: { accept: false } });
  assert.deepEqual([no.body.data.accepted, no.body.data.sharedWithMe], [false, false]);
  assert.equal((await t.api('GET', A(), { token: u.key })).status, 404);
  const yes = await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: { accept: true } });
  assert.equal(yes.status, 200);
  assert.deepEqual([yes.body.data.accepted, yes.body.data.sharedWithMe, yes.body.data.agentId], [true, true, agentId]);
  const seen = await t.api('GET', A(), { token: u.key });
  assert.equal(seen.status, 200);
  assert.equal(seen.body.data.sharedWithMe, true);
  const mine = await t.api('GET', '/api/v1/agents?sharedWithMe=true', { token: u.key });
  assert.deepEqual(mine.body.data.items.map((a: any) => a.id), [agentId]);
  assert.equal((await resolveErr(u.id, agentId)), 'ok');
  const got = await resolveUsableAgent(t.hub.ctx, u.id, agentId);
  assert.equal(got.ownerId, owner.id);
  assert.equal(got.engine, 'claude-code');
  // the owner deciding on its own link is a conflict
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: owner.key, body: { accept: true } })).status, 409);
  // still not manageable by the member
  assert.equal((await t.api('GET', `${A()}/manage`, { token: u.key })).status, 404);
});

test('invitation tokens are single-use; members are listed and can be removed', async () => {
  const inv = await t.api('GET', `${A()}/invites`, { token: owner.key });
  assert.equal(inv.status, 200);
  const tok = inv.body.data.token as string;
  const before = inv.body.data.total as number;
  const a = await t.user('invitee');
  const b = await t.user();
  assert.equal((await t.api('POST', `/api/v1/invites/${tok}/decide`, { token: a.key, body: { accept: true } })).status, 200);
  assert.equal((await t.api('POST', `/api/v1/invites/${tok}/decide`, { token: b.key, body: { accept: true } })).status, 404, 'used up');
  const after1 = await t.api('GET', `${A()}/invites`, { token: owner.key });
  assert.equal(after1.body.data.total, before + 1);
  const row = after1.body.data.items.find((m: any) => m.userId === a.id);
  assert.deepEqual([row.name, row.via], ['invitee', 'invite']);
  assert.notEqual(after1.body.data.token, tok);
  const ref = await t.api('POST', `${A()}/invites/refresh`, { token: owner.key });
  assert.notEqual(ref.body.data.token, after1.body.data.token);
  assert.equal((await t.api('GET', `/api/v1/invites/${after1.body.data.token}`)).status, 404);

  assert.equal((await t.api('GET', A(), { token: a.key })).body.data.sharedWithMe, true);
  const rm = await t.api('DELETE', `${A()}/invites/${a.id}`, { token: owner.key });
  assert.equal(rm.status, 200);
  assert.equal((await t.api('GET', A(), { token: a.key })).status, 404, 'removal takes effect at once');
  assert.equal(await resolveErr(a.id, agentId), 'NOT_FOUND');
  assert.equal((await t.api('DELETE', `${A()}/invites/${a.id}`, { token: owner.key })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/invites/nope')).status, 404);
});

test('resolveUsableAgent: owner ok; disabled or unbound → AGENT_UNUSABLE; deleting the agent drops shares', async () => {
  assert.equal(await resolveErr(owner.id, agentId), 'ok');
  const u = await t.user();
  const { token } = (await t.api('GET', `${A()}/share-link`, { token: owner.key })).body.data;
  await t.api('POST', `/api/v1/invites/${token}/decide`, { token: u.key, body: { accept: true } });
  await t.api('PATCH', A(), { token: owner.key, body: { enable: false } });
  assert.equal(await resolveErr(u.id, agentId), 'AGENT_UNUSABLE');
  assert.equal(await resolveErr(owner.id, agentId), 'AGENT_UNUSABLE');
  await t.api('PATCH', A(), { token: owner.key, body: { enable: true, hostId: '', engine: '' } });
  assert.equal(await resolveErr(owner.id, agentId), 'AGENT_UNUSABLE');
  assert.equal(await resolveErr(u.id, 'nobody/none'), 'NOT_FOUND');
  assert.equal((await t.api('DELETE', A(), { token: owner.key })).status, 204);
  // the same id, created again, is not shared with the old member
  const again = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'private-helper' } });
  assert.equal(again.body.data.id, agentId);
  assert.equal((await t.api('GET', A(), { token: u.key })).status, 404);
});
