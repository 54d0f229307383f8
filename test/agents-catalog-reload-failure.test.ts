// the agents catalog drops what it was told before it has
// reloaded it. A full reload (after a Bus reconnect, or an account deletion's `auth` event) clears
// `stale` and the dirty ids first, then queries; when that query fails (a database blip, often
// right after the outage that made the catalog stale), the catalog reads as current again with the
// rows it had, and the invalidations it had received are gone. A stranger keeps being served an
// agent its owner made private (and may open sessions on it) until the periodic resync
// (AGENTS_RESYNC_MS, 5 min), though the change's event did arrive. `reload` (a few ids) puts its
// ids back on failure; the full load should too (stay stale, retry at the next read).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { injectDbFaults } from './helpers/db-faults.js';
import { catalogOn } from '../src/agents/catalog.js';
import { resolveUsableAgent } from '../src/agents/usage.js';

let t: TestHub;
before(async () => {
  t = await startTestHub(); // AGENTS_RESYNC_MS at its default (5 min)
});
after(() => t.close());

const statusOf = (p: Promise<unknown>) => p.then(() => 200, (e: { status?: number }) => e.status ?? 0);

test('a failed full reload of the catalog loses the invalidations it had received: a private agent stays served', async () => {
  const owner = await t.user('reload-owner');
  const host = await seedHost(t, owner.id);
  const { id } = await t.client(owner.key).agents.create({ name: 'goes-private-too', scope: 'public', step: 'submit', hostId: host, engine: 'claude-code' });
  await t.admin.admin.approveAgent(id);
  const strangerUser = await t.user('reload-stranger');
  const stranger = t.client(strangerUser.key);
  assert.equal(await statusOf(stranger.market.get(id)), 200, 'public: the catalog holds the row');

  // The owner makes it private through another node: the row changes and its event arrives here.
  await t.hub.ctx.em().getConnection().execute(`update agents set scope = 'private' where id = ?`, [id]);
  const cat = catalogOn(t.hub.ctx.bus)!;
  cat.agentsChanged(id);
  // Meanwhile an account is deleted (its `auth` event makes the catalog reload everything).
  const doomed = await t.user('reload-doomed');
  await t.admin.admin.deleteUser(doomed.id);

  // The next read's full load fails once (a database blip).
  let failed = 0;
  const undo = injectDbFaults(t.hub.ctx, (sql) => {
    if (failed === 0 && sql.includes('as favorite_count') && !sql.includes('where a.id in')) {
      failed++;
      return Promise.reject(new Error('injected: connection reset'));
    }
    return undefined;
  });
  try {
    await statusOf(stranger.market.get(id)); // whatever this one answers
  } finally {
    undo();
  }
  assert.equal(failed, 1, 'the full load was attempted and failed');

  // The database is back: every later read must see the agent private.
  assert.equal(await statusOf(stranger.market.get(id)), 404, 'a private agent is not served to a stranger once the database answers again');
  await assert.rejects(async () => resolveUsableAgent(t.hub.ctx, strangerUser.id, id), (e: { kind?: string }) => e.kind === 'NOT_FOUND',
    'nor may a stranger open a session on it');
});
