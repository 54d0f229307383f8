import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';
import type { AgentWriteBody, MineParams } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const enc = encodeURIComponent;

test('create with defaults: 201, private, free, online, version 1, id contains "/"', async () => {
  const u = await t.user('Carol Smith');
  // Raw: checks the 201 status itself.
  const r = await t.api('POST', '/api/v1/agents', { token: u.key, body: {} });
  assert.equal(r.status, 201);
  const a = r.body.data;
  assert.equal(a.id, 'carol-smith/new-agent');
  assert.equal(a.name, 'new-agent');
  assert.equal(a.displayName, 'new-agent');
  assert.equal(a.description, '');
  assert.deepEqual(a.tags, []);
  assert.equal(a.category, 'other');
  assert.equal(a.scope, 'private');
  assert.equal(a.pricing, 'free');
  assert.equal(a.usageStatus, 'online');
  assert.equal(a.enable, true);
  assert.equal(a.version, 1);
  assert.equal(a.favorited, false);
  assert.equal(a.hostName, '');
  assert.equal(a.hostUp, false);
  for (const k of ['usageCount', 'sessionCount', 'runs', 'cost', 'earn', 'favoriteCount']) assert.equal(a[k], 0, k);
  assert.match(a.createdAt, /^\d{4}-\d\d-\d\dT/);
  // a second agent of the same name gets a unique id
  assert.equal((await t.client(u.key).agents.create({})).id, 'carol-smith/new-agent-2');
});

test('create: writable fields map to the agent object; private forces pay=free', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code'], 'box-1');
  const a = await t.client(u.key).agents.create({ name: 'Reviewer', displayName: 'Code Reviewer', desc: 'reviews code', tags: ['ts', 'review'], cat: 'coding', scope: 'private', pay: 'paid', hostId: host, engine: 'claude-code', workDir: 'src/app', expectedInput: 'a diff', expectedOutput: 'comments' });
  assert.equal(a.displayName, 'Code Reviewer');
  assert.equal(a.description, 'reviews code');
  assert.deepEqual(a.tags, ['ts', 'review']);
  assert.equal(a.category, 'coding');
  assert.equal(a.pricing, 'free');
  assert.equal(a.engine, 'claude-code');
  assert.equal(a.hostId, host);
  assert.equal(a.hostName, 'box-1');
  assert.equal(a.workDir, 'src/app');
  assert.equal(a.expectedInput, 'a diff');
  assert.equal(a.expectedOutput, 'comments');
});

test('create: draft disables by default; public submit → reviewing/pending', async () => {
  const c = t.client((await t.user()).key);
  const d = await c.agents.create({ name: 'd', step: 'draft' });
  assert.equal(d.usageStatus, 'draft');
  assert.equal(d.enable, false);
  const p = await c.agents.create({ name: 'p', scope: 'public', pay: 'paid', step: 'submit' });
  assert.equal(p.usageStatus, 'reviewing');
  assert.equal(p.reviewStatus, 'pending');
  assert.equal(p.pricing, 'paid');
  assert.equal(p.version, 1);
  const n = await c.agents.create({ name: 'n', scope: 'public' });
  assert.equal(n.usageStatus, 'offline');
  assert.equal(n.reviewStatus, undefined);
});

test('a draft submitted takes the non-draft default, enabled (unless the PATCH says otherwise): approved, it is listed', async () => {
  // A draft starts disabled; submitted, it kept enable false, so an approved agent never reached the market.
  const u = await t.user();
  const c = t.client(u.key);
  const d = await c.agents.create({ name: 'drafted', step: 'draft', scope: 'public' });
  assert.equal(d.enable, false);
  const s = await c.agents.update(d.id, { step: 'submit' });
  assert.equal(s.usageStatus, 'reviewing');
  assert.equal(s.enable, true);
  await t.admin.admin.approveAgent(d.id);
  assert.ok((await t.client().market.list({ q: 'drafted' })).items.some((a) => a.id === d.id), 'listed once approved');
  const kept = await c.agents.create({ name: 'drafted-off', step: 'draft' });
  assert.equal((await c.agents.update(kept.id, { step: 'submit', enable: false })).enable, false, 'an explicit enable stands');
});

test('create: validation errors are 400; foreign or missing host is 404', async () => {
  const u = await t.user();
  const other = await t.user();
  const mine = await seedHost(t, u.id, ['claude-code']);
  const theirs = await seedHost(t, other.id, ['claude-code']);
  const cases: Array<[unknown, number]> = [
    [{ model: 'gpt' }, 400],
    [{ extra: 1 }, 400],
    [{ hostId: mine }, 400],
    [{ engine: 'claude-code' }, 400],
    [{ hostId: mine, engine: 'codex' }, 400],
    [{ hostId: mine, engine: 'bad engine!' }, 400],
    [{ workDir: '../etc' }, 400],
    [{ workDir: 'a/../../b' }, 400],
    [{ workDir: '/abs' }, 400],
    [{ workDir: 'C:\\x' }, 400],
    [{ name: '' }, 400],
    [{ name: 'x'.repeat(81) }, 400],
    [{ displayName: 'x'.repeat(81) }, 400],
    [{ desc: 'x'.repeat(1001) }, 400],
    [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 400],
    [{ tags: ['x'.repeat(31)] }, 400],
    [{ tags: [''] }, 400],
    [{ cat: 'x'.repeat(51) }, 400],
    [{ scope: 'team' }, 400],
    [{ pay: 'cheap' }, 400],
    [{ step: 'publish' }, 400],
    [{ hostId: 'x'.repeat(121), engine: 'e' }, 400],
    [{ workDir: 'a'.repeat(501) }, 400],
    [{ expectedInput: 'a'.repeat(501) }, 400],
    [{ hostId: theirs, engine: 'claude-code' }, 404],
    [{ hostId: 'hst_missing', engine: 'claude-code' }, 404],
  ];
  const c = t.client(u.key);
  for (const [body, status] of cases) {
    await assert.rejects(c.agents.create(body as AgentWriteBody), apiError(status), JSON.stringify(body).slice(0, 80));
  }
  // Raw: the exact failure envelope (data: null), for a schema failure and a domain one.
  for (const [body, status] of [[{ model: 'gpt' }, 400], [{ hostId: theirs, engine: 'claude-code' }, 404]] as const) {
    const r = await t.api('POST', '/api/v1/agents', { token: u.key, body });
    assert.deepEqual([r.status, r.body.data], [status, null], r.text);
  }
  // Raw: a content type other than JSON.
  const ct = await t.api('POST', '/api/v1/agents', { token: u.key, raw: '{}', headers: { 'content-type': 'text/plain' } });
  assert.equal(ct.status, 400);
  await assert.rejects(t.client().agents.create({}), apiError(401));
});

test('PATCH: partial update, only-step submit bumps version, paired host check, 404 for others', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code', 'codex']);
  const c = t.client(u.key);
  const { id } = await c.agents.create({ name: 'pa', scope: 'public' });
  const p1 = await c.agents.update(id, { desc: 'new desc', hostId: host, engine: 'codex' });
  assert.equal(p1.description, 'new desc');
  assert.equal(p1.engine, 'codex');
  assert.equal(p1.name, 'pa');
  assert.equal(p1.version, 1);
  const s = await c.agents.update(id, { step: 'submit' });
  assert.equal(s.usageStatus, 'reviewing');
  assert.equal(s.reviewStatus, 'pending');
  assert.equal(s.version, 2);
  await assert.rejects(c.agents.update(id, { hostId: host }), apiError(400));
  await assert.rejects(c.agents.update(id, { model: 'x' } as AgentWriteBody), apiError(400));
  await assert.rejects(c.agents.update(id, { workDir: 'x/..' }), apiError(400));
  // unbinding: both empty
  const ub = await c.agents.update(id, { hostId: '', engine: '' });
  assert.equal(ub.hostId, '');
  assert.equal(ub.engine, undefined);
  // private forces free on update
  const pr = await c.agents.update(id, { scope: 'private', pay: 'paid' });
  assert.equal(pr.pricing, 'free');
  assert.equal(pr.usageStatus, 'online');
  assert.equal(pr.reviewStatus, undefined);

  const o = t.client((await t.user()).key);
  const foreign: Array<[string, () => Promise<unknown>]> = [
    ['PATCH', () => o.agents.update(id, { desc: 'x' })],
    ['DELETE', () => o.agents.remove(id)],
    ['manage', () => o.agents.manage(id)],
    ['stats', () => o.agents.stats(id)],
    ['share-link', () => o.agents.shareLink(id)],
    ['invites', () => o.agents.invites(id)],
    ['invites/refresh', () => o.agents.refreshInvite(id)],
    ['share-link/refresh', () => o.agents.refreshShareLink(id)],
  ];
  for (const [name, call] of foreign) await assert.rejects(call(), apiError(404), name);
  await assert.rejects(c.agents.update('x'.repeat(121), {}), apiError(400));
  await assert.rejects(c.agents.manage('nobody/nothing'), apiError(404));
});

test('manage view has lastUsedAt null, hostId, workDir, hostName', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code'], 'desk');
  const c = t.client(u.key);
  const made = await c.agents.create({ name: 'mv', hostId: host, engine: 'claude-code', workDir: 'w' });
  const m = await c.agents.manage(made.id);
  assert.equal(m.lastUsedAt, null);
  assert.equal(m.hostId, host);
  assert.equal(m.hostName, 'desk');
  assert.equal(m.workDir, 'w');
  assert.equal(m.id, made.id);
});

test('DELETE → 204 with no body; then 404 everywhere', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { id } = await c.agents.create({ name: 'gone' });
  // Raw: checks the 204 status and the empty body themselves.
  const d = await t.api('DELETE', `/api/v1/agents/${enc(id)}`, { token: u.key });
  assert.equal(d.status, 204);
  assert.equal(d.text, '');
  await assert.rejects(c.market.get(id), apiError(404));
  await assert.rejects(c.agents.manage(id), apiError(404));
  await assert.rejects(c.agents.remove(id), apiError(404));
});

test('mine: filters, sorts, paging, management fields', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code', 'codex'], 'rig');
  const c = t.client(u.key);
  await c.agents.create({ name: 'alpha', desc: 'finds bugs', hostId: host, engine: 'claude-code' });
  await c.agents.create({ name: 'beta', scope: 'public', pay: 'paid', step: 'submit', hostId: host, engine: 'codex' });
  await c.agents.create({ name: 'gamma', step: 'draft' });
  await c.agents.create({ name: 'delta', enable: false });
  await t.client((await t.user()).key).agents.create({ name: 'alpha' });
  const all = await c.agents.mine();
  assert.equal(all.total, 4);
  assert.equal(all.page, 1);
  assert.equal(all.pageSize, 20);
  assert.equal(all.hasMore, false);
  assert.ok(all.items.every((a) => 'hostName' in a && 'hostUp' in a));
  const names = async (q: MineParams) => (await c.agents.mine(q)).items.map((a) => a.name).sort();
  assert.deepEqual(await names({ keyword: 'BUGS' }), ['alpha']);
  assert.deepEqual(await names({ usageStatus: 'draft,reviewing' }), ['beta', 'gamma']);
  assert.deepEqual(await names({ scope: 'public' }), ['beta']);
  assert.deepEqual(await names({ pay: 'paid' }), ['beta']);
  assert.deepEqual(await names({ engine: 'codex' }), ['beta']);
  assert.deepEqual(await names({ hostId: host }), ['alpha', 'beta']);
  assert.deepEqual(await names({ enable: 'false' }), ['delta', 'gamma']);
  assert.deepEqual(await names({ enable: 'true' }), ['alpha', 'beta']);
  const p = await c.agents.mine({ pageSize: 3, page: 2, sort: 'recent' });
  assert.equal(p.items.length, 1);
  assert.equal(p.hasMore, false);
  const p1 = await c.agents.mine({ pageSize: 3, sort: 'recent' });
  assert.equal(p1.hasMore, true);
  assert.equal(p1.items[0].name, 'delta');
  for (const sort of ['sessions', 'runs', 'cost', 'earn'] as const) await c.agents.mine({ sort });
  const bads: Array<Record<string, string | number>> = [{ enable: 'yes' }, { pageSize: 101 }, { pageSize: 0 }, { page: 0 }, { sort: 'name' }, { usageStatus: 'gone' }, { keyword: 'k'.repeat(101) }, { scope: 'x' }];
  for (const bad of bads) await assert.rejects(c.agents.mine(bad as MineParams), apiError(400), JSON.stringify(bad));
  await assert.rejects(t.client().agents.mine(), apiError(401));
});

test('overview, stats summary, per-agent stats, ai-fill', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const a = await c.agents.create({ name: 'o1' });
  await c.agents.create({ name: 'o2', step: 'draft' });
  const ov = await c.agents.overview();
  assert.equal(ov.total, 2);
  assert.equal(ov.byStatus.draft, 1);
  assert.equal(ov.byStatus.online, 1);
  const ss = await c.agents.statsSummary();
  assert.equal(ss.agents, 2);
  assert.equal(ss.sessionCount, 0);
  const st = await c.agents.stats(a.id);
  assert.equal(st.sharedWith, 0);
  assert.equal(st.lastUsedAt, null);
  const text = 'Reviews TypeScript pull requests and finds bugs in TypeScript code.';
  const f = await c.agents.aiFill({ text });
  assert.equal(f.cat, 'coding');
  assert.ok(f.tags.includes('typescript'));
  assert.ok(f.displayName.length > 0 && f.displayName.length <= 80);
  assert.deepEqual(await c.agents.aiFill({ text }), f);
  await assert.rejects(c.agents.aiFill({ text: '' }), apiError(400));
});
