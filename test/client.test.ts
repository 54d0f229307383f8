// The typed client (src/client) against a real hub: the envelope is unwrapped,
// failures come back as ApiError with the catalogue's status and code.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { connectFakeHost, pairHost, type FakeHost } from './helpers/host.js';
import { ApiError, createClient, type Agent, type SessionView } from '../src/client/index.js';
import { apiError } from './helpers/api-error.js';



let t: TestHub;
let owner: { id: string; key: string };
let agentId: string;
let host: FakeHost;

before(async () => {
  t = await startTestHub();
  owner = await t.user('client-owner');
  // A connected host, so a message sent through the client is accepted.
  const paired = await pairHost(t, owner.key);
  host = await connectFakeHost(t, paired.credential);
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'clientbot', desc: 'typed', cat: 'coding', tags: ['ts'], scope: 'public', step: 'submit', hostId: paired.hostId, engine: 'claude-code' } });
  assert.equal(c.status, 201, c.text);
  agentId = c.body.data.id;
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(agentId)}/approve`, { token: t.adminKey })).status, 200);
});
after(async () => {
  host?.close();
  await t.close();
});

test('market calls work anonymously and return the data of the envelope', async () => {
  const anon = createClient({ baseUrl: t.url });
  const page = await anon.market.list({ q: 'clientbot', sort: 'recent', page: 1, pageSize: 5 });
  assert.equal(page.total, 1);
  assert.equal(page.pageSize, 5);
  const a: Agent = page.items[0];
  assert.equal(a.name, 'clientbot');
  assert.deepEqual(a.tags, ['ts']);
  assert.equal((await anon.market.get(agentId)).id, agentId);
  assert.ok(Array.isArray(await anon.market.featured()));
  assert.ok((await anon.market.facets()).cats.some((c) => c.key === 'coding'));
});

test('failures are ApiError with the status and catalogue code', async () => {
  const anon = createClient({ baseUrl: t.url });
  await assert.rejects(anon.me(), (e: unknown) => e instanceof ApiError && e.status === 401 && e.code === '4010');
  await assert.rejects(anon.market.get('agt_nope'), (e: unknown) => e instanceof ApiError && e.status === 404);
  const bad = createClient({ baseUrl: t.url, token: 'ahk_wrong' });
  await assert.rejects(bad.market.list(), (e: unknown) => e instanceof ApiError && e.status === 401);
  const user = createClient({ baseUrl: t.url, token: owner.key });
  // Invalid query values reach the hub's checker, which answers 400 VALIDATION.
  await assert.rejects(user.sessions.list({ pageSize: 500 }), (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === '4000');
});

test('signed-in calls: me, my agents, hosts, pair key, sessions', async () => {
  const c = createClient({ baseUrl: t.url + '/', token: owner.key });
  assert.equal((await c.me()).name, 'client-owner');
  const mine = await c.agents.mine();
  assert.deepEqual(mine.items.map((a) => a.name), ['clientbot']);
  assert.equal(typeof mine.items[0].hostId, 'string');
  const hosts = await c.hosts.list();
  assert.equal(hosts.total, 1);
  assert.equal((await c.hosts.get(hosts.items[0].id)).id, hosts.items[0].id);
  const pk = await c.hosts.pairKey();
  assert.ok(pk.pairKey.length > 10 && pk.expiresAt > Date.now());

  const s = (await c.sessions.create({ agentId, title: 'from the client' })) as SessionView;
  assert.equal(s.title, 'from the client');
  assert.equal(s.agentId, agentId);
  const list = await c.sessions.list({ agentId });
  assert.deepEqual(list.items.map((x) => x.id), [s.id]);
  const sent = await c.sessions.send(s.id, { content: 'hello' });
  assert.equal(sent.sessionId, s.id);
  assert.ok(['processing', 'queued'].includes(sent.status));
  const got = await c.sessions.get(s.id, { includeMessages: true });
  assert.ok(got.messages!.some((m) => m.role === 'user' && m.content === 'hello'), JSON.stringify(got.messages));
  const hist = await c.sessions.messages(s.id, { limit: 10 });
  assert.ok(hist.items.length >= 1);
});

test('administration and session upkeep through the client: users, plans, grants, rename and delete', async () => {
  const made = await t.admin.admin.createUser({ name: 'client-made' });
  assert.match(made.apiKey, /^ahk_/);
  const u = t.client(made.apiKey);
  assert.equal((await u.me()).name, 'client-made');
  assert.ok((await t.admin.admin.usersSummary()).total >= 2);
  const before = (await u.billing.balance()).balance;
  const g = await t.admin.admin.grantTokens(made.user.id, 2);
  assert.equal(g.qty, 2);
  assert.ok((await u.billing.balance()).balance > before);
  const expire = Date.now() + 86_400_000;
  assert.equal((await t.admin.admin.setPlan(made.user.id, { planId: 'pro', planExpireAt: expire })).planId, 'pro');
  assert.equal((await u.billing.myPlan()).planId, 'pro');
  // A session renamed and removed by its owner.
  const mine = t.client(owner.key);
  const s = (await mine.sessions.create({ agentId })) as SessionView;
  assert.equal((await mine.sessions.update(s.id, { title: 'renamed' })).title, 'renamed');
  assert.deepEqual(await mine.sessions.remove(s.id), { deleted: true });
  await assert.rejects(mine.sessions.get(s.id), apiError(404));
  assert.deepEqual(await t.admin.admin.deleteUser(made.user.id), { deleted: true });
  await assert.rejects(u.me(), apiError(401));
});
