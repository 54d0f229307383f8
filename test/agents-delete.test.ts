// Deleting an agent is irreversible and takes its sessions (and their history) with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test("DELETE /agents/{id} deletes the agent's sessions too", async () => {
  const u = await t.user();
  const host = await seedHost(t, u.id);
  const a = await t.api('POST', '/api/v1/agents', { token: u.key, body: { name: 'short-lived', hostId: host, engine: 'claude-code' } });
  assert.equal(a.status, 201);
  const agentId = a.body.data.id as string;
  const s = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId } });
  assert.equal(s.status, 201);
  const sid = s.body.data.id as string;
  assert.equal((await t.api('GET', `/api/v1/sessions/${sid}`, { token: u.key })).status, 200);

  assert.equal((await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: u.key })).status, 204);
  assert.equal((await t.api('GET', `/api/v1/sessions/${sid}`, { token: u.key })).status, 404);
  assert.equal((await t.api('GET', `/api/v1/sessions/${sid}/messages`, { token: u.key })).status, 404);
  const list = await t.api('GET', `/api/v1/sessions?agentId=${encodeURIComponent(agentId)}`, { token: u.key });
  assert.equal(list.status, 200);
  assert.equal(list.body.data.total, 0);
});
