// Deleting an agent is irreversible and takes its sessions (and their history) with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { apiError } from './helpers/api-error.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test("DELETE /agents/{id} deletes the agent's sessions too", async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const host = await seedHost(t, u.id);
  const agentId = (await c.agents.create({ name: 'short-lived', hostId: host, engine: 'claude-code' })).id;
  const sid = ((await c.sessions.create({ agentId })) as SessionView).id;
  assert.equal((await c.sessions.get(sid)).id, sid);

  assert.equal(await c.agents.remove(agentId), undefined);
  await assert.rejects(c.sessions.get(sid), apiError(404));
  await assert.rejects(c.sessions.messages(sid), apiError(404));
  const list = await c.sessions.list({ agentId });
  assert.equal(list.total, 0);
});
