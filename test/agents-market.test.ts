import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';
import { notifyAgentChanged, recordRun, recordSessionOpened } from '../src/agents/usage.js';
import type { AgentWriteBody, Client, MarketParams } from '../src/client/index.js';

let t: TestHub;
let owner: { id: string; key: string };
let viewer: { id: string; key: string };
let own: Client;
let view: Client;
let anon: Client;
const ids: Record<string, string> = {};

async function publish(name: string, body: AgentWriteBody) {
  const host = await seedHost(t, owner.id);
  const c = await own.agents.create({ name, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', ...body });
  await t.admin.admin.approveAgent(c.id);
  ids[name] = c.id;
}

before(async () => {
  t = await startTestHub();
  owner = await t.user('market-owner');
  viewer = await t.user('viewer');
  own = t.client(owner.key);
  view = t.client(viewer.key);
  anon = t.client();
  await publish('pyhelp', { desc: 'Python helper', tags: ['python', 'code'], cat: 'coding', pay: 'paid' });
  await publish('writer', { desc: 'Blog writer', tags: ['blog'], cat: 'writing' });
  await publish('sqlbot', { desc: 'SQL and charts', tags: ['sql', 'code'], cat: 'data' });
  ids.secret = (await own.agents.create({ name: 'secret' })).id;
  ids.drafty = (await own.agents.create({ name: 'drafty', step: 'draft' })).id;
});
after(() => t.close());

const names = async (q: MarketParams = {}, c: Client = anon) => (await c.market.list(q)).items.map((a) => a.name);

test('anonymous callers see only approved public agents, with every required field', async () => {
  const page = await anon.market.list();
  assert.deepEqual(Object.keys(page).sort(), ['hasMore', 'items', 'page', 'pageSize', 'total']);
  assert.deepEqual((await names()).sort(), ['pyhelp', 'sqlbot', 'writer']);
  const req = ['id', 'name', 'displayName', 'description', 'tags', 'category', 'scope', 'pricing', 'usageStatus', 'usageCount', 'sessionCount', 'runs', 'cost', 'earn', 'favoriteCount', 'favorited', 'enable', 'version'];
  for (const a of page.items) for (const k of req) assert.ok(k in a, k);
  assert.ok(page.items.every((a) => !('hostId' in a) && !('workDir' in a)), 'market view hides the binding');
  await assert.rejects(anon.market.get(ids.secret), apiError(404));
  await assert.rejects(anon.market.get(ids.drafty), apiError(404));
  const one = await anon.market.get(ids.pyhelp);
  assert.equal(one.ownerName, 'market-owner');
  assert.equal(one.favorited, false);
  await assert.rejects(t.client('ahk_invalid').market.list(), apiError(401));
});

test('signed-in owner also sees its own non-draft agents; others do not', async () => {
  assert.deepEqual((await names({ scope: 'private' }, own)).sort(), ['secret']);
  assert.deepEqual(await names({ scope: 'private' }, view), []);
  assert.equal((await own.market.get(ids.drafty)).id, ids.drafty);
  assert.ok(!(await names({}, own)).includes('drafty'));
});

test('filters: q, cat, tag, scope, pricing; bad values → 400', async () => {
  assert.deepEqual(await names({ q: 'BLOG' }), ['writer']);
  assert.deepEqual(await names({ cat: 'data' }), ['sqlbot']);
  assert.deepEqual((await names({ tag: 'code' })).sort(), ['pyhelp', 'sqlbot']);
  assert.deepEqual(await names({ pricing: 'paid' }), ['pyhelp']);
  assert.deepEqual((await names({ pricing: 'free' })).sort(), ['sqlbot', 'writer']);
  assert.deepEqual(await names({ q: 'nothing-matches' }), []);
  // Raw: the error envelope's data is null, and most of these values are outside the client's typed query.
  for (const bad of ['?pageSize=0', '?pageSize=101', '?page=0', '?sort=name', '?scope=x', '?pricing=x', '?favOnly=maybe', '?unknown=1']) {
    const r = await t.api('GET', `/api/v1/agents${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.data, null);
  }
});

test('paging and hasMore', async () => {
  const p1 = await anon.market.list({ pageSize: 2 });
  assert.equal(p1.total, 3);
  assert.equal(p1.items.length, 2);
  assert.equal(p1.hasMore, true);
  const p2 = await anon.market.list({ pageSize: 2, page: 2 });
  assert.equal(p2.items.length, 1);
  assert.equal(p2.hasMore, false);
  const all = [...p1.items, ...p2.items].map((a) => a.id);
  assert.equal(new Set(all).size, 3);
});

test('favorites: toggle, favoriteCount, favorited, favOnly, sort=favs', async () => {
  const fav = await view.market.favorite(ids.writer, true);
  assert.deepEqual([fav.favorited, fav.favoriteCount], [true, 1]);
  const again = await view.market.favorite(ids.writer, true);
  assert.equal(again.favoriteCount, 1, 'idempotent');
  const one = await view.market.get(ids.writer);
  assert.equal(one.favorited, true);
  assert.equal(one.favoriteCount, 1);
  assert.equal((await anon.market.get(ids.writer)).favorited, false);
  assert.deepEqual(await names({ favOnly: true }, view), ['writer']);
  assert.deepEqual(await names({ favOnly: true }), [], 'anonymous has no favorites');
  assert.equal((await names({ sort: 'favs' }))[0], 'writer');
  const un = await view.market.favorite(ids.writer, false);
  assert.deepEqual([un.favorited, un.favoriteCount], [false, 0]);
  assert.deepEqual(await names({ favOnly: true }, view), []);
  await assert.rejects(view.market.favorite(ids.secret, true), apiError(404));
  await assert.rejects(anon.market.favorite(ids.writer, true), apiError(401));
});

test('usage counters from sessions reach the market; sort=usage and sessions; featured', async () => {
  const em = t.hub.ctx.em();
  await em.transactional(async (tem) => {
    await recordSessionOpened(tem, ids.sqlbot, viewer.id);
    await recordSessionOpened(tem, ids.sqlbot, viewer.id);
    await recordRun(tem, ids.sqlbot, { cost: 7, userId: viewer.id });
    await recordSessionOpened(tem, ids.pyhelp, viewer.id);
    await recordRun(tem, ids.pyhelp, { cost: 5, userId: viewer.id });
  });
  notifyAgentChanged(t.hub.ctx.bus, ids.sqlbot, ids.pyhelp);
  const a = await anon.market.get(ids.sqlbot);
  assert.deepEqual([a.sessionCount, a.usageCount, a.runs, a.cost, a.earn], [2, 1, 1, 7, 0]);
  const p = await anon.market.get(ids.pyhelp);
  // Counters only: the owner's earning comes with the run's charge (hub_charge_runs, test/economy-charges.test.ts).
  assert.deepEqual([p.runs, p.cost, p.earn], [1, 5, 0]);
  assert.equal((await names({ sort: 'sessions' }))[0], 'sqlbot');
  const f = await anon.market.featured();
  assert.ok(Array.isArray(f) && f.length === 3);
  assert.ok(!f.some((x) => x.name === 'secret'));
  const m = await own.agents.manage(ids.sqlbot);
  assert.equal(typeof m.lastUsedAt, 'number');
  assert.deepEqual(await names({ sort: 'recent', pageSize: 1 }), [(await names({ sort: 'recent' }))[0]]);
});

test('facets count categories and tags over what the caller may see', async () => {
  const facets = await anon.market.facets();
  assert.deepEqual(facets.cats.find((c) => c.key === 'coding'), { key: 'coding', label: 'Coding', count: 1 });
  assert.equal(facets.tags.find((x) => x.key === 'code')!.count, 2);
  assert.equal(facets.cats.find((c) => c.key === 'other'), undefined);
  const mine = await own.market.facets();
  assert.equal(mine.cats.find((c) => c.key === 'other')!.count, 1, 'own private agent counted for its owner');
});

test('the read path is cached and kept true by Bus invalidation', async () => {
  const before1 = await anon.market.get(ids.writer);
  // A write that bypasses the service (as another node's would) is invisible until its event arrives.
  await t.hub.ctx.em().getConnection().execute(`update agents set display_name = 'Renamed' where id = ?`, [ids.writer]);
  assert.equal((await anon.market.get(ids.writer)).displayName, before1.displayName);
  notifyAgentChanged(t.hub.ctx.bus, ids.writer);
  assert.equal((await anon.market.get(ids.writer)).displayName, 'Renamed');
  assert.ok((await names({ q: 'renamed' })).includes('writer'));
  // A service write invalidates at once: returning to review unlists it.
  await own.agents.update(ids.writer, { desc: 'changed' });
  assert.ok(!(await names()).includes('writer'));
  await assert.rejects(anon.market.get(ids.writer), apiError(404));
});

test('an owner disabling a listed agent takes it out of the market at once; enabling it lists it again', async () => {
  await publish('toggler', { desc: 'On and off' });
  const id = ids.toggler;
  assert.ok((await names()).includes('toggler'));
  assert.equal((await own.agents.update(id, { enable: false })).enable, false);
  assert.ok(!(await names()).includes('toggler'), 'a disabled agent is not listed');
  await assert.rejects(anon.market.get(id), apiError(404));
  await assert.rejects(view.market.get(id), apiError(404));
  assert.equal((await own.market.get(id)).enable, false, 'its owner still reads it');
  assert.ok((await names({}, own)).includes('toggler'), 'and sees it among its own');
  assert.equal((await own.agents.update(id, { enable: true })).enable, true);
  assert.ok((await names()).includes('toggler'), 'enabling is not a substantive change: listed again without a review');
  assert.equal((await view.market.get(id)).id, id);
});

test('deleting an account drops its agents from the market and its favorites from favoriteCount', async () => {
  const fan = await t.user();
  await t.client(fan.key).market.favorite(ids.sqlbot, true);
  assert.equal((await anon.market.get(ids.sqlbot)).favoriteCount, 1);
  await t.admin.admin.deleteUser(fan.id);
  assert.equal((await anon.market.get(ids.sqlbot)).favoriteCount, 0);
  await t.admin.admin.deleteUser(owner.id);
  assert.deepEqual(await names(), []);
  await assert.rejects(anon.market.get(ids.pyhelp), apiError(404));
});
