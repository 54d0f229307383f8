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
  const a = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'views', scope: 'public', step: 'submit', hostId, engine: 'claude-code' } });
  assert.equal(a.status, 201, a.text);
  const id = encodeURIComponent(a.body.data.id);
  const ok = async (method: string, path: string, body?: unknown, token = owner.key) => {
    const r = await t.api(method, path, { token, ...(body === undefined ? {} : { body }) });
    assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
    return r.body.data;
  };
  valid(AgentStats, await ok('GET', `/api/v1/agents/${id}/stats`), 'stats of a reviewing agent');
  const link = await ok('GET', `/api/v1/agents/${id}/share-link`);
  valid(ShareToken, link, 'share link');
  valid(ShareToken, await ok('POST', `/api/v1/agents/${id}/share-link/refresh`), 'share link refresh');
  valid(Invites, await ok('GET', `/api/v1/agents/${id}/invites`), 'invitations, nobody joined');
  valid(ShareToken, await ok('POST', `/api/v1/agents/${id}/invites/refresh`), 'invitation refresh');
  const fresh = await ok('GET', `/api/v1/agents/${id}/share-link`);
  await ok('POST', `/api/v1/invites/${fresh.token}/decide`, { accept: true }, guest.key);
  const inv = await ok('GET', `/api/v1/agents/${id}/invites`);
  valid(Invites, inv, 'invitations with a member');
  assert.equal(inv.total, 1);
  valid(AgentStats, await ok('GET', `/api/v1/agents/${id}/stats`), 'stats with a member');
  valid(MemberRemoved, await ok('DELETE', `/api/v1/agents/${id}/invites/${guest.id}`), 'member removed');
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${id}/approve`, { token: t.adminKey })).status, 200);
  valid(AgentStats, await ok('GET', `/api/v1/agents/${id}/stats`), 'stats of an approved agent');
  valid(AiFillDraft, await ok('POST', '/api/v1/agents/ai-fill', { text: 'Summarises research papers about databases.' }), 'ai-fill (rules)');
});
