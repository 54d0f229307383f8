// Favorites and memberships had no bound: each is a row, and every node keeps each signed-in caller's
// favorites and shares in memory (agents/catalog.ts) and reads them all on a cold cache. An account now
// holds at most FAVORITES_PER_ACCOUNT favorites and MEMBERSHIPS_PER_ACCOUNT shared agents (409 past
// them); removing a favorite works even for an agent the caller can no longer read, so a full list can
// always be made room in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';
import { FAVORITES_PER_ACCOUNT, MEMBERSHIPS_PER_ACCOUNT } from '../src/account-caps.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

/** `n` private agents of `ownerId`, written straight to the table (the API would take minutes). */
async function bulkAgents(ownerId: string, n: number, tag: string): Promise<string[]> {
  const rows = await t.hub.ctx.em().getConnection().execute(
    `insert into agents (id, owner_id, name, display_name, usage_status) select ? || g, ?, ? || g, ? || g, 'online' from generate_series(1, ?) g returning id`,
    [`${tag}/bulk-`, ownerId, `bulk-`, `Bulk `, n],
  );
  return rows.map((r: any) => r.id);
}

test(`an account holds at most ${FAVORITES_PER_ACCOUNT} favorites; one gone makes room; a favorite of an agent no longer readable can be removed`, async () => {
  const u = await t.user('fav-collector');
  const c = t.client(u.key);
  const ids = await bulkAgents(u.id, FAVORITES_PER_ACCOUNT - 1, `favs-${u.id}`);
  await t.hub.ctx.em().getConnection().execute(`insert into agent_favorites (user_id, agent_id) select ?, unnest(?::text[])`, [u.id, `{${ids.join(',')}}`]);
  const owner = await t.user('fav-owner');
  const own = t.client(owner.key);
  const a = await own.agents.create({ name: 'first' });
  const b = await own.agents.create({ name: 'second' });
  const { token } = await own.agents.shareLink(a.id);
  await c.invites.decide(token, true);
  await c.invites.decide((await own.agents.shareLink(b.id)).token, true);

  assert.equal((await c.market.favorite(a.id, true)).favorited, true, 'the last one that fits');
  await assert.rejects(c.market.favorite(b.id, true), apiError(409));
  assert.equal((await c.market.favorite(a.id, true)).favorited, true, 'favoriting one held again is no new row');

  // The owner removes the collector: the agent is no longer readable, yet its favorite can go.
  await own.agents.removeMember(a.id, u.id);
  await assert.rejects(c.market.get(a.id), apiError(404));
  assert.equal((await c.market.favorite(a.id, false)).favorited, false);
  await assert.rejects(c.market.favorite(a.id, false), apiError(404), 'nothing left to remove, and still not readable');
  assert.equal((await c.market.favorite(b.id, true)).favorited, true, 'room again');
});

test(`an account joins at most ${MEMBERSHIPS_PER_ACCOUNT} shared agents`, async () => {
  const owner = await t.user('many-shares-owner');
  const u = await t.user('joiner');
  const ids = await bulkAgents(owner.id, MEMBERSHIPS_PER_ACCOUNT, `mem-${owner.id}`);
  await t.hub.ctx.em().getConnection().execute(`insert into agent_members (agent_id, user_id, via) select unnest(?::text[]), ?, 'link'`, [`{${ids.join(',')}}`, u.id]);
  const own = t.client(owner.key);
  const one = await own.agents.create({ name: 'one-more' });
  const c = t.client(u.key);
  await assert.rejects(c.invites.decide((await own.agents.shareLink(one.id)).token, true), apiError(409));
  assert.equal((await own.agents.invites(one.id)).total, 0);
});
