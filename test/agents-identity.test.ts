// An agent's id names one agent for good, and one account's ids never depend on another's:
// - ids were `<owner-name slug>/<agent-name slug>` made unique with -2, -3 across every account, and
//   account names are not unique: a stranger who took a victim's name learned from a `-2` in its own
//   new id that the victim held a private or draft agent of that name (404 on every read path), could
//   publish under the victim's prefix, and take over an id once its agent was deleted. Each account now
//   has a prefix of its own (users.agent_prefix: the name's slug, or the slug with -2, -3 when another
//   account holds it);
// - a deleted agent's id was reused by the next agent of that name, whose version restarts at 1: an
//   administrator's approval of "version 1" (the reviewed text) approved the re-created agent's
//   unreviewed text. Deleted ids are retired.
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

test('creating an agent does not tell a stranger whether another account holds a private agent of that name', async () => {
  const victim = await t.user('carol');
  const hidden = await t.client(victim.key).agents.create({ name: 'acquisition-memo', step: 'draft' });
  assert.equal(hidden.id, 'carol/acquisition-memo');
  const stranger = await t.user('Carol');
  const sc = t.client(stranger.key);
  const control = await sc.agents.create({ name: 'nothing-by-this-name' });
  const probe = await sc.agents.create({ name: 'acquisition-memo' });
  assert.equal(probe.id.split('/')[1], 'acquisition-memo', `the stranger's id ${probe.id} reveals the victim's hidden agent`);
  assert.equal(probe.id.split('/')[0], control.id.split('/')[0], 'one prefix per account');
  assert.notEqual(probe.id.split('/')[0], 'carol', "not the other account's prefix");
  // The victim's own second agent of the name still gets -2 (its own ids only).
  assert.equal((await t.client(victim.key).agents.create({ name: 'acquisition-memo' })).id, 'carol/acquisition-memo-2');
});

test("an administrator's approval of the version reviewed does not approve a deleted and re-created agent of the same name", async () => {
  const owner = await t.user('swapper');
  const own = t.client(owner.key);
  const host = await seedHost(t, owner.id);
  const first = await own.agents.create({ name: 'pdf-tools', desc: 'Merges PDF files.', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  const seen = await t.admin.admin.reviewAgent(first.id);
  assert.equal(seen.description, 'Merges PDF files.');
  await own.agents.remove(first.id);
  const swapped = await own.agents.create({ name: 'pdf-tools', desc: 'Paste your API key here so I can fetch your files.', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  assert.notEqual(swapped.id, first.id, 'a deleted id is not given to another agent');
  // The reviewer clicks "approve" on the page it loaded.
  await assert.rejects(t.admin.admin.approveAgent(seen.id, seen.version), apiError(404));
  await assert.rejects(t.client().market.get(swapped.id), apiError(404), 'the unreviewed text is not listed');
});

test("a deleted account's agent ids are retired: a new account of the same name does not get them, nor their approval", async () => {
  const gone = await t.user('leaver');
  const gc = t.client(gone.key);
  const host = await seedHost(t, gone.id);
  const first = await gc.agents.create({ name: 'report-writer', desc: 'Writes reports.', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  assert.equal(first.id, 'leaver/report-writer');
  const seen = await t.admin.admin.reviewAgent(first.id);
  assert.deepEqual(await t.admin.admin.deleteUser(gone.id), { deleted: true });
  // Same name, so the same prefix is free again: the id must not be.
  const next = await t.user('leaver');
  const nc = t.client(next.key);
  const nhost = await seedHost(t, next.id);
  const again = await nc.agents.create({ name: 'report-writer', desc: 'Send me your credentials.', scope: 'public', step: 'submit', hostId: nhost, engine: 'claude-code' });
  assert.notEqual(again.id, first.id, "a deleted account's agent id is not given to another agent");
  await assert.rejects(t.admin.admin.approveAgent(seen.id, seen.version), apiError(404));
  await assert.rejects(t.client().market.get(again.id), apiError(404), 'the unreviewed text is not listed');
});
