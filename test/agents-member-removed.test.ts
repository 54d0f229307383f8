// A member the owner removed could join again at once with the share link it had used (the link is
// multi-use and the removal did not touch it), and read and use the private agent again. A removal is
// now remembered: the removed user is refused on the share link until the owner invites it again (an
// invitation is single-use and the owner's own choice).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('a removed member cannot rejoin with the share link; an invitation from the owner lets it back', async () => {
  const owner = await t.user('rejoin-owner');
  const own = t.client(owner.key);
  const host = await seedHost(t, owner.id);
  const { id } = await own.agents.create({ name: 'secret-helper', hostId: host, engine: 'claude-code' });
  const { token } = await own.agents.shareLink(id);

  const ex = await t.user('ex-member');
  const exc = t.client(ex.key);
  await exc.invites.decide(token, true);
  assert.equal((await exc.market.get(id)).sharedWithMe, true);
  await own.agents.removeMember(id, ex.id);
  await assert.rejects(exc.market.get(id), apiError(404), 'removed');

  await assert.rejects(exc.invites.decide(token, true), apiError(403));
  assert.ok(!(await own.agents.invites(id)).items.some((m) => m.userId === ex.id), 'not back among the members');
  await assert.rejects(exc.market.get(id), apiError(404));
  // Others still join with the link.
  const other = t.client((await t.user('newcomer')).key);
  assert.equal((await other.invites.decide(token, true)).sharedWithMe, true);

  // The owner invites the removed user again, deliberately.
  const inv = await own.agents.invites(id);
  assert.equal((await exc.invites.decide(inv.token, true)).sharedWithMe, true);
  assert.equal((await exc.market.get(id)).sharedWithMe, true);
  // The invitation forgave the removal: the share link no longer refuses it.
  assert.equal((await exc.invites.decide(token, true)).sharedWithMe, true);
  // Removed again: the link still refuses it.
  await own.agents.removeMember(id, ex.id);
  await assert.rejects(exc.invites.decide(token, true), apiError(403));
});
