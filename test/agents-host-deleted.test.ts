// A deleted host unbinds its agents (agents.host_id is `on delete set null`); the agents catalog,
// which serves the market, the owner's views and the check that an agent is usable, must learn it
// too: it kept the deleted host's id for good, so owner views named a host that was gone and
// sessions were opened (and counted) on an agent the database says has no host.
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

test('a deleted host unbinds its agents in the catalog too: they read unbound and new sessions are refused 400', async () => {
  const owner = await t.user('host-remover');
  const own = t.client(owner.key);
  const host = await seedHost(t, owner.id);
  const { id } = await own.agents.create({ name: 'bound-then-not', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  const other = await own.agents.create({ name: 'bound-too', hostId: host, engine: 'claude-code' });
  await t.admin.admin.approveAgent(id);
  const guest = await t.user('guest-of-unbound');
  const gc = t.client(guest.key);
  await gc.market.get(id); // the catalog holds the row

  await own.hosts.remove(host);
  const rows = await t.hub.ctx.em().getConnection().execute(`select host_id from agents where id in (?, ?)`, [id, other.id]);
  assert.deepEqual(rows.map((r: any) => r.host_id), [null, null], 'the database unbound them');

  assert.equal((await own.agents.manage(id)).hostId, '', 'the owner view names no host');
  assert.equal((await own.agents.manage(other.id)).hostId, '');
  await assert.rejects(gc.sessions.create({ agentId: id }), apiError(400), 'no session on an agent without a host');
});

test('an agent change whose event was lost is found by the periodic resync (AGENTS_RESYNC_MS): a row made private stops being served', async () => {
  const r = await startTestHub({ agentsResyncMs: 200 } as any);
  try {
    const owner = await r.user('lost-event-owner');
    const host = await seedHost(r, owner.id);
    const { id } = await r.client(owner.key).agents.create({ name: 'goes-private', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
    await r.admin.admin.approveAgent(id);
    const stranger = r.client((await r.user('stranger')).key);
    await stranger.market.get(id); // held by the catalog
    // A writer that committed and died before publishing: the table changed, no event came.
    await r.hub.ctx.em().getConnection().execute(`update agents set scope = 'private' where id = ?`, [id]);
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = await stranger.market.get(id).then(() => 200, (e) => e.status);
      if (status === 200) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(status, 404, 'the private agent is no longer served to a stranger');
  } finally {
    await r.close();
  }
});
