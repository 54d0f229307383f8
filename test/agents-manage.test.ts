import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { ApiError, createClient } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

const enc = encodeURIComponent;

test('create with defaults: 201, private, free, online, version 1, id contains "/"', async () => {
  const u = await t.user('Carol Smith');
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
  const r2 = await t.api('POST', '/api/v1/agents', { token: u.key, body: {} });
  assert.equal(r2.body.data.id, 'carol-smith/new-agent-2');
});

test('create: writable fields map to the agent object; private forces pay=free', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code'], 'box-1');
  const r = await t.api('POST', '/api/v1/agents', {
    token: u.key,
    body: { name: 'Reviewer', displayName: 'Code Reviewer', desc: 'reviews code', tags: ['ts', 'review'], cat: 'coding', scope: 'private', pay: 'paid', hostId: host, engine: 'claude-code', workDir: 'src/app', expectedInput: 'a diff', expectedOutput: 'comments' },
  });
  assert.equal(r.status, 201, r.text);
  const a = r.body.data;
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
  const u = await t.user();
  const d = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'd', step: 'draft' } });
  assert.equal(d.body.data.usageStatus, 'draft');
  assert.equal(d.body.data.enable, false);
  const p = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'p', scope: 'public', pay: 'paid', step: 'submit' } });
  assert.equal(p.body.data.usageStatus, 'reviewing');
  assert.equal(p.body.data.reviewStatus, 'pending');
  assert.equal(p.body.data.pricing, 'paid');
  assert.equal(p.body.data.version, 1);
  const n = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'n', scope: 'public' } });
  assert.equal(n.body.data.usageStatus, 'offline');
  assert.equal(n.body.data.reviewStatus, undefined);
});

test('create: validation errors are 400; foreign or missing host is 404', async () => {
  const u = await t.user();
  const other = await t.user();
  const mine = await seedHost(t, u.id, ['claude-code']);
  const theirs = await seedHost(t, other.id, ['claude-code']);
  const post = (body: unknown) => t.api('POST', '/api/v1/agents', { token: u.key, body });
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
  for (const [body, status] of cases) {
    const r = await post(body);
    assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 80)} → ${r.status} ${r.text}`);
    assert.equal(r.body.data, null);
  }
  const ct = await t.api('POST', '/api/v1/agents', { token: u.key, raw: '{}', headers: { 'content-type': 'text/plain' } });
  assert.equal(ct.status, 400);
  assert.equal((await t.api('POST', '/api/v1/agents', { body: {} })).status, 401);
});

test('PATCH: partial update, only-step submit bumps version, paired host check, 404 for others', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code', 'codex']);
  const c = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'pa', scope: 'public' } });
  const id = enc(c.body.data.id);
  const p1 = await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { desc: 'new desc', hostId: host, engine: 'codex' } });
  assert.equal(p1.status, 200, p1.text);
  assert.equal(p1.body.data.description, 'new desc');
  assert.equal(p1.body.data.engine, 'codex');
  assert.equal(p1.body.data.name, 'pa');
  assert.equal(p1.body.data.version, 1);
  const s = await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { step: 'submit' } });
  assert.equal(s.body.data.usageStatus, 'reviewing');
  assert.equal(s.body.data.reviewStatus, 'pending');
  assert.equal(s.body.data.version, 2);
  assert.equal((await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { hostId: host } })).status, 400);
  assert.equal((await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { model: 'x' } })).status, 400);
  assert.equal((await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { workDir: 'x/..' } })).status, 400);
  // unbinding: both empty
  const ub = await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { hostId: '', engine: '' } });
  assert.equal(ub.body.data.hostId, '');
  assert.equal(ub.body.data.engine, undefined);
  // private forces free on update
  const pr = await t.api('PATCH', `/api/v1/agents/${id}`, { token: u.key, body: { scope: 'private', pay: 'paid' } });
  assert.equal(pr.body.data.pricing, 'free');
  assert.equal(pr.body.data.usageStatus, 'online');
  assert.equal(pr.body.data.reviewStatus, undefined);

  const other = await t.user();
  for (const [m, path] of [['PATCH', ''], ['DELETE', ''], ['GET', '/manage'], ['GET', '/stats'], ['GET', '/share-link'], ['GET', '/invites'], ['POST', '/invites/refresh'], ['POST', '/share-link/refresh']] as const) {
    const r = await t.api(m, `/api/v1/agents/${id}${path}`, { token: other.key, body: m === 'PATCH' ? { desc: 'x' } : undefined });
    assert.equal(r.status, 404, `${m} ${path}`);
  }
  assert.equal((await t.api('PATCH', `/api/v1/agents/${'x'.repeat(121)}`, { token: u.key, body: {} })).status, 400);
  assert.equal((await t.api('GET', `/api/v1/agents/nobody%2Fnothing/manage`, { token: u.key })).status, 404);
});

test('manage view has lastUsedAt null, hostId, workDir, hostName', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code'], 'desk');
  const c = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'mv', hostId: host, engine: 'claude-code', workDir: 'w' } });
  const m = await t.api('GET', `/api/v1/agents/${enc(c.body.data.id)}/manage`, { token: u.key });
  assert.equal(m.status, 200);
  assert.equal(m.body.data.lastUsedAt, null);
  assert.equal(m.body.data.hostId, host);
  assert.equal(m.body.data.hostName, 'desk');
  assert.equal(m.body.data.workDir, 'w');
  assert.equal(m.body.data.id, c.body.data.id);
});

test('DELETE → 204 with no body; then 404 everywhere', async () => {
  const u = await t.user();
  const c = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'gone' } });
  const id = enc(c.body.data.id);
  const d = await t.api('DELETE', `/api/v1/agents/${id}`, { token: u.key });
  assert.equal(d.status, 204);
  assert.equal(d.text, '');
  assert.equal((await t.api('GET', `/api/v1/agents/${id}`, { token: u.key })).status, 404);
  assert.equal((await t.api('GET', `/api/v1/agents/${id}/manage`, { token: u.key })).status, 404);
  assert.equal((await t.api('DELETE', `/api/v1/agents/${id}`, { token: u.key })).status, 404);
});

test('mine: filters, sorts, paging, management fields', async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id, ['claude-code', 'codex'], 'rig');
  const mk = (body: object) => t.api('POST', '/api/v1/agents', { token: u.key, body });
  await mk({ name: 'alpha', desc: 'finds bugs', hostId: host, engine: 'claude-code' });
  await mk({ name: 'beta', scope: 'public', pay: 'paid', step: 'submit', hostId: host, engine: 'codex' });
  await mk({ name: 'gamma', step: 'draft' });
  await mk({ name: 'delta', enable: false });
  const other = await t.user();
  await t.api('POST', '/api/v1/agents', { token: other.key, body: { name: 'alpha' } });
  const mine = (qs = '') => t.api('GET', `/api/v1/agents/mine${qs}`, { token: u.key });
  const all = await mine();
  assert.equal(all.status, 200);
  assert.equal(all.body.data.total, 4);
  assert.equal(all.body.data.page, 1);
  assert.equal(all.body.data.pageSize, 20);
  assert.equal(all.body.data.hasMore, false);
  assert.ok(all.body.data.items.every((a: any) => 'hostName' in a && 'hostUp' in a));
  const names = async (qs: string) => (await mine(qs)).body.data.items.map((a: any) => a.name).sort();
  assert.deepEqual(await names('?keyword=BUGS'), ['alpha']);
  assert.deepEqual(await names('?usageStatus=draft,reviewing'), ['beta', 'gamma']);
  assert.deepEqual(await names('?scope=public'), ['beta']);
  assert.deepEqual(await names('?pay=paid'), ['beta']);
  assert.deepEqual(await names('?engine=codex'), ['beta']);
  assert.deepEqual(await names(`?hostId=${host}`), ['alpha', 'beta']);
  assert.deepEqual(await names('?enable=false'), ['delta', 'gamma']);
  assert.deepEqual(await names('?enable=true'), ['alpha', 'beta']);
  const p = await mine('?pageSize=3&page=2&sort=recent');
  assert.equal(p.body.data.items.length, 1);
  assert.equal(p.body.data.hasMore, false);
  const p1 = await mine('?pageSize=3&sort=recent');
  assert.equal(p1.body.data.hasMore, true);
  assert.equal(p1.body.data.items[0].name, 'delta');
  for (const s of ['sessions', 'runs', 'cost', 'earn']) assert.equal((await mine(`?sort=${s}`)).status, 200);
  for (const bad of ['?enable=yes', '?pageSize=101', '?pageSize=0', '?page=0', '?sort=name', '?usageStatus=gone', `?keyword=${'k'.repeat(101)}`, '?scope=x']) {
    assert.equal((await mine(bad)).status, 400, bad);
  }
  assert.equal((await t.api('GET', '/api/v1/agents/mine')).status, 401);
});

test('overview, stats summary, per-agent stats, ai-fill', async () => {
  const u = await t.user();
  const c = createClient({ baseUrl: t.url, token: u.key });
  const a = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'o1' } });
  await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'o2', step: 'draft' } });
  const ov = await c.agents.overview();
  assert.equal(ov.total, 2);
  assert.equal(ov.byStatus.draft, 1);
  assert.equal(ov.byStatus.online, 1);
  const ss = await c.agents.statsSummary();
  assert.equal(ss.agents, 2);
  assert.equal(ss.sessionCount, 0);
  const st = await c.agents.stats(a.body.data.id);
  assert.equal(st.sharedWith, 0);
  assert.equal(st.lastUsedAt, null);
  const text = 'Reviews TypeScript pull requests and finds bugs in TypeScript code.';
  const f = await c.agents.aiFill({ text });
  assert.equal(f.cat, 'coding');
  assert.ok(f.tags.includes('typescript'));
  assert.ok(f.displayName.length > 0 && f.displayName.length <= 80);
  assert.deepEqual(await c.agents.aiFill({ text }), f);
  await assert.rejects(c.agents.aiFill({ text: '' }), (e: unknown) => e instanceof ApiError && e.status === 400);
});
