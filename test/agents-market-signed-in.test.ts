// A signed-in market read is served from the same serialized pages as an
// anonymous one, patched only where the caller's own flags are set: the bytes
// match an anonymous read until the caller favorites an agent on the page, and
// one caller's flags never reach another caller's page or the shared memo.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
let viewer: { id: string; key: string };
let other: { id: string; key: string };
const ids: string[] = [];

before(async () => {
  t = await startTestHub();
  const owner = await t.user('memo-owner');
  viewer = await t.user('memo-viewer');
  other = await t.user('memo-other');
  const me = t.client(owner.key);
  for (const name of ['alpha', 'beta', 'gamma']) {
    const a = await me.agents.create({ name, scope: 'public', step: 'submit', hostId: await seedHost(t, owner.id), engine: 'claude-code' });
    await t.admin.admin.approveAgent(a.id);
    ids.push(a.id);
  }
});
after(() => t.close());

// Raw reads: the point is the bytes of the answer.
const page = async (token?: string) => {
  const r = await t.api('GET', '/api/v1/agents?pageSize=20&sort=recent', { token });
  assert.equal(r.status, 200, r.text);
  return r.text;
};
const one = async (id: string, token?: string) => (await t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}`, { token })).text;

test('without flags a signed-in page is byte for byte the anonymous page', async () => {
  const anon = await page();
  assert.equal(await page(viewer.key), anon);
  assert.equal(await one(ids[1], viewer.key), await one(ids[1]));
});

test("a favorite patches the caller's page only, and unfavoriting restores the shared bytes", async () => {
  const anon = await page();
  await t.client(viewer.key).market.favorite(ids[1], true);
  const mine = JSON.parse(await page(viewer.key)).data;
  const flags = Object.fromEntries(mine.items.map((a: any) => [a.id, a.favorited]));
  assert.deepEqual(flags, { [ids[0]]: false, [ids[1]]: true, [ids[2]]: false });
  assert.equal(mine.items.find((a: any) => a.id === ids[1]).favoriteCount, 1);
  assert.equal(JSON.parse(await one(ids[1], viewer.key)).data.favorited, true);
  // Neither another caller nor an anonymous one sees the viewer's flag (favoriteCount moved for all).
  const anonAfter = await page();
  assert.notEqual(anonAfter, anon, 'favoriteCount is part of the shared page');
  assert.equal(await page(other.key), anonAfter);
  assert.ok(JSON.parse(anonAfter).data.items.every((a: any) => a.favorited === false));
  assert.equal(JSON.parse(await one(ids[1], other.key)).data.favorited, false);
  await t.client(viewer.key).market.favorite(ids[1], false);
  assert.equal(await page(viewer.key), await page());
});
