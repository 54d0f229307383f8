// A draft is its owner's alone: members do not see it in the market or by id. But whoever held the
// share link or an invitation token read the draft's whole text (description, instructions) through
// GET /invites/{token}, and could join it. A token of a draft now leads nowhere for anyone but the
// owner (404, as a token that does not exist) until the owner takes the agent out of draft.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test("a draft's share link and invitation show it to its owner only", async () => {
  const owner = await t.user('draft-owner');
  const own = t.client(owner.key);
  const { id } = await own.agents.create({ name: 'unfinished', desc: 'not ready for anyone', step: 'draft' });
  const { token: link } = await own.agents.shareLink(id);
  const { token: invite } = await own.agents.invites(id);

  const stranger = t.client((await t.user('draft-stranger')).key);
  for (const tok of [link, invite]) {
    await assert.rejects(stranger.invites.get(tok), apiError(404), 'the draft is not shown');
    await assert.rejects(stranger.invites.decide(tok, true), apiError(404), 'nor joined');
  }
  assert.equal((await own.agents.invites(id)).total, 0, 'nobody joined');
  assert.equal((await own.invites.get(link)).isOwner, true, 'the owner still sees where its link leads');

  // Out of draft: the same tokens work.
  await own.agents.update(id, { step: 'submit' });
  assert.equal((await stranger.invites.get(link)).agent.id, id);
  assert.equal((await stranger.invites.decide(invite, true)).sharedWithMe, true);
});
