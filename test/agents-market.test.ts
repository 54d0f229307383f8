import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { notifyAgentChanged, recordRun, recordSessionOpened } from '../src/agents/usage.js';

let t: TestHub;
let owner: { id: string; key: string };
let viewer: { id: string; key: string };
const ids: Record<string, string> = {};
const enc = encodeURIComponent;

async function publish(name: string, body: object) {
  const host = await seedHost(t, owner.id);
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, scope: 'public', step: 'submit', hostId: host, engine: 'claude-code', ...body } });
  assert.equal(c.status, 201, c.text);
  const ap = await t.api('POST', `/api/v1/admin/agents/${enc(c.body.data.id)}/approve`, { token: t.adminKey });
  assert.equal(ap.status, 200);
  ids[name] = c.body.data.id;
}

before(async () => {
  t = await startTestHub();
  owner = await t.user('market-owner');
  viewer = await t.user('viewer');
  await publish('pyhelp', { desc: 'Python helper', tags: ['python', 'code'], cat: 'coding', pay: 'paid' });
  await publish('writer', { desc: 'Blog writer', tags: ['blog'], cat: 'writing' });
  await publish('sqlbot', { desc: 'SQL and charts', tags: ['sql', 'code'], cat: 'data' });
  const priv = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'secret' } });
  ids.secret = priv.body.data.id;
  const draft = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'drafty', step: 'draft' } });
  ids.drafty = draft.body.data.id;
});
after(() => t.close());

const list = (qs = '', token?: string) => t.api('GET', `/api/v1/agents${qs}`, { token });
const names = async (qs = '', token?: string) => (await list(qs, token)).body.data.items.map((a: any) => a.name);

test('anonymous callers see only approved public agents, with every required field', async () => {
  const r = await list();
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body.data).sort(), ['hasMore', 'items', 'page', 'pageSize', 'total']);
  assert.deepEqual((await names()).sort(), ['pyhelp', 'sqlbot', 'writer']);
  const req = ['id', 'name', 'displayName', 'description', 'tags', 'category', 'scope', 'pricing', 'usageStatus', 'usageCount', 'sessionCount', 'runs', 'cost', 'earn', 'favoriteCount', 'favorited', 'enable', 'version'];
  for (const a of r.body.data.items) for (const k of req) assert.ok(k in a, k);
  assert.ok(r.body.data.items.every((a: any) => !('hostId' in a) && !('workDir' in a)), 'market view hides the binding');
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.secret)}`)).status, 404);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.drafty)}`)).status, 404);
  const one = await t.api('GET', `/api/v1/agents/${enc(ids.pyhelp)}`);
  assert.equal(one.body.data.ownerName, 'market-owner');
  assert.equal(one.body.data.favorited, false);
  assert.equal((await list('', 'ahk_invalid')).status, 401);
});

test('signed-in owner also sees its own non-draft agents; others do not', async () => {
  assert.deepEqual((await names('?scope=private', owner.key)).sort(), ['secret']);
  assert.deepEqual(await names('?scope=private', viewer.key), []);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.drafty)}`, { token: owner.key })).status, 200);
  assert.ok(!(await names('', owner.key)).includes('drafty'));
});

test('filters: q, cat, tag, scope, pricing; bad values → 400', async () => {
  assert.deepEqual(await names('?q=BLOG'), ['writer']);
  assert.deepEqual(await names('?cat=data'), ['sqlbot']);
  assert.deepEqual((await names('?tag=code')).sort(), ['pyhelp', 'sqlbot']);
  assert.deepEqual(await names('?pricing=paid'), ['pyhelp']);
  assert.deepEqual((await names('?pricing=free')).sort(), ['sqlbot', 'writer']);
  assert.deepEqual(await names('?q=nothing-matches'), []);
  for (const bad of ['?pageSize=0', '?pageSize=101', '?page=0', '?sort=name', '?scope=x', '?pricing=x', '?favOnly=maybe', '?unknown=1']) {
    const r = await list(bad);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.data, null);
  }
});

test('paging and hasMore', async () => {
  const p1 = await list('?pageSize=2');
  assert.equal(p1.body.data.total, 3);
  assert.equal(p1.body.data.items.length, 2);
  assert.equal(p1.body.data.hasMore, true);
  const p2 = await list('?pageSize=2&page=2');
  assert.equal(p2.body.data.items.length, 1);
  assert.equal(p2.body.data.hasMore, false);
  const all = [...p1.body.data.items, ...p2.body.data.items].map((a: any) => a.id);
  assert.equal(new Set(all).size, 3);
});

test('favorites: toggle, favoriteCount, favorited, favOnly, sort=favs', async () => {
  const fav = await t.api('POST', `/api/v1/agents/${enc(ids.writer)}/favorite`, { token: viewer.key });
  assert.equal(fav.status, 200);
  assert.deepEqual([fav.body.data.favorited, fav.body.data.favoriteCount], [true, 1]);
  const again = await t.api('POST', `/api/v1/agents/${enc(ids.writer)}/favorite`, { token: viewer.key });
  assert.equal(again.body.data.favoriteCount, 1, 'idempotent');
  const one = await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`, { token: viewer.key });
  assert.equal(one.body.data.favorited, true);
  assert.equal(one.body.data.favoriteCount, 1);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`)).body.data.favorited, false);
  assert.deepEqual(await names('?favOnly=true', viewer.key), ['writer']);
  assert.deepEqual(await names('?favOnly=true'), [], 'anonymous has no favorites');
  assert.equal((await names('?sort=favs'))[0], 'writer');
  const un = await t.api('DELETE', `/api/v1/agents/${enc(ids.writer)}/favorite`, { token: viewer.key });
  assert.deepEqual([un.body.data.favorited, un.body.data.favoriteCount], [false, 0]);
  assert.deepEqual(await names('?favOnly=true', viewer.key), []);
  assert.equal((await t.api('POST', `/api/v1/agents/${enc(ids.secret)}/favorite`, { token: viewer.key })).status, 404);
  assert.equal((await t.api('POST', `/api/v1/agents/${enc(ids.writer)}/favorite`)).status, 401);
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
  const a = (await t.api('GET', `/api/v1/agents/${enc(ids.sqlbot)}`)).body.data;
  assert.deepEqual([a.sessionCount, a.usageCount, a.runs, a.cost, a.earn], [2, 1, 1, 7, 0]);
  const p = (await t.api('GET', `/api/v1/agents/${enc(ids.pyhelp)}`)).body.data;
  // Counters only: the owner's earning comes with the run's charge (hub_charge_runs, test/economy-charges.test.ts).
  assert.deepEqual([p.runs, p.cost, p.earn], [1, 5, 0]);
  assert.equal((await names('?sort=sessions'))[0], 'sqlbot');
  const f = await t.api('GET', '/api/v1/agents/featured');
  assert.equal(f.status, 200);
  assert.ok(Array.isArray(f.body.data) && f.body.data.length === 3);
  assert.ok(!f.body.data.some((x: any) => x.name === 'secret'));
  const m = await t.api('GET', `/api/v1/agents/${enc(ids.sqlbot)}/manage`, { token: owner.key });
  assert.equal(typeof m.body.data.lastUsedAt, 'number');
  assert.deepEqual(await names('?sort=recent&pageSize=1'), [(await names('?sort=recent'))[0]]);
});

test('facets count categories and tags over what the caller may see', async () => {
  const anon = (await t.api('GET', '/api/v1/agents/facets')).body.data;
  assert.deepEqual(anon.cats.find((c: any) => c.key === 'coding'), { key: 'coding', label: 'Coding', count: 1 });
  assert.equal(anon.tags.find((x: any) => x.key === 'code').count, 2);
  assert.equal(anon.cats.find((c: any) => c.key === 'other'), undefined);
  const own = (await t.api('GET', '/api/v1/agents/facets', { token: owner.key })).body.data;
  assert.equal(own.cats.find((c: any) => c.key === 'other').count, 1, 'own private agent counted for its owner');
});

test('the read path is cached and kept true by Bus invalidation', async () => {
  const before1 = (await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`)).body.data;
  // A write that bypasses the service (as another node's would) is invisible until its event arrives.
  await t.hub.ctx.em().getConnection().execute(`update agents set display_name = 'Renamed' where id = ?`, [ids.writer]);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`)).body.data.displayName, before1.displayName);
  notifyAgentChanged(t.hub.ctx.bus, ids.writer);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`)).body.data.displayName, 'Renamed');
  assert.ok((await names('?q=renamed')).includes('writer'));
  // A service write invalidates at once: returning to review unlists it.
  await t.api('PATCH', `/api/v1/agents/${enc(ids.writer)}`, { token: owner.key, body: { desc: 'changed' } });
  assert.ok(!(await names()).includes('writer'));
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.writer)}`)).status, 404);
});

test('deleting an account drops its agents from the market and its favorites from favoriteCount', async () => {
  const fan = await t.user();
  await t.api('POST', `/api/v1/agents/${enc(ids.sqlbot)}/favorite`, { token: fan.key });
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.sqlbot)}`)).body.data.favoriteCount, 1);
  assert.equal((await t.api('DELETE', `/api/v1/admin/users/${fan.id}`, { token: t.adminKey })).status, 200);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.sqlbot)}`)).body.data.favoriteCount, 0);
  assert.equal((await t.api('DELETE', `/api/v1/admin/users/${owner.id}`, { token: t.adminKey })).status, 200);
  assert.deepEqual(await names(), []);
  assert.equal((await t.api('GET', `/api/v1/agents/${enc(ids.pyhelp)}`)).status, 404);
});
