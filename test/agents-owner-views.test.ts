// The answers of the owner tools the console uses (stats, share link,
// invitations, member removal, ai-fill) validate against the data schemas
// their routes declare, which the typed client's types come from.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { AgentStats, AiFill as AiFillDraft, Invites, MemberRemoved, ShareToken } from '../src/agents/view-schemas.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

function valid(schema: TSchema, data: unknown, what: string) {
  const c = Compile(schema);
  assert.ok(c.Check(data), `${what}: ${JSON.stringify([...c.Errors(data)].slice(0, 2))} in ${JSON.stringify(data)}`);
}

test('stats, share link, invitations, member removal and ai-fill answer as their schemas say', async () => {
  const owner = await t.user('schema-owner');
  const guest = await t.user('schema-guest');
  const hostId = await seedHost(t, owner.id);
  const own = t.client(owner.key);
  const a = await own.agents.create({ name: 'views', scope: 'public', step: 'submit', hostId, engine: 'claude-code' });
  const id = a.id;
  valid(AgentStats, await own.agents.stats(id), 'stats of a reviewing agent');
  const link = await own.agents.shareLink(id);
  valid(ShareToken, link, 'share link');
  valid(ShareToken, await own.agents.refreshShareLink(id), 'share link refresh');
  valid(Invites, await own.agents.invites(id), 'invitations, nobody joined');
  valid(ShareToken, await own.agents.refreshInvite(id), 'invitation refresh');
  const fresh = await own.agents.shareLink(id);
  await t.client(guest.key).invites.decide(fresh.token, true);
  const inv = await own.agents.invites(id);
  valid(Invites, inv, 'invitations with a member');
  assert.equal(inv.total, 1);
  valid(AgentStats, await own.agents.stats(id), 'stats with a member');
  valid(MemberRemoved, await own.agents.removeMember(id, guest.id), 'member removed');
  await t.admin.admin.approveAgent(id);
  valid(AgentStats, await own.agents.stats(id), 'stats of an approved agent');
  valid(AiFillDraft, await own.agents.aiFill({ text: 'Summarises research papers about databases.' }), 'ai-fill (rules)');
});
