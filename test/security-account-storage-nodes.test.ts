// a node that found an account full (ACCOUNT_STORED_MAX_BYTES) refuses its
// messages from memory; deleting sessions "makes room" (the refusal's own advice) but only the node
// that served the DELETE forgets. Behind a load balancer the owner deletes sessions on one node and
// keeps being refused 409 on the others until each re-reads the sum (at most once a minute, and only
// in the background of a message it refuses anyway). Two hubs on one database and Redis.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';

const SESSION_MAX = 256 * 1024 * 1024;
const skip = await clusterSkipReason();
const nodes = useCluster(skip, [{ nodeId: 'store-a' }, { nodeId: 'store-b' }]);
let host: FakeHost | undefined;
after(() => host?.close());

test('sessions deleted on one node make room on the others too', { skip, timeout: 60_000 }, async () => {
  const [a, b] = nodes.hubs;
  const owner = await a.user('hoarder-nodes');
  const { hostId, credential } = await pairHost(a, owner.key);
  host = await connectFakeHost(a, credential, { capacity: 4 });
  const agent = await agentWhenReady(a.client(owner.key), { name: 'hoard-n', hostId, engine: 'claude-code', workDir: '' });
  const open = await a.client(owner.key).sessions.create({ agentId: agent.id });
  assert.ok('id' in open);
  await a.hub.ctx.em().getConnection().execute(
    `insert into sessions (id, user_id, agent_id, agent_name, title, mode, effort, last_active_at, stored_bytes)
     select 'ses_fulln_' || g, ?, ?, 'hoard-n', 'full ' || g, 'default', 'default', now(), ? from generate_series(1, 20) g`,
    [owner.id, agent.id, SESSION_MAX],
  );
  const send = (t: typeof a) => t.api('POST', `/api/v1/sessions/${encodeURIComponent(open.id)}/messages`, { token: owner.key, body: { content: 'more' } });

  // Node B finds the account full (20 × 256 MiB = 5 GiB > 4 GiB).
  assert.equal((await b.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId: agent.id } })).status, 409);
  assert.equal((await send(b)).status, 409);

  // The owner makes room on node A: 15 full sessions are 3.75 GiB, under the bound.
  for (let g = 1; g <= 5; g++) assert.equal((await a.api('DELETE', `/api/v1/sessions/ses_fulln_${g}`, { token: owner.key })).status, 200);
  const [held] = await a.hub.ctx.em().getConnection().execute(`select sum(stored_bytes)::bigint as n from sessions where user_id = ?`, [owner.id]);
  assert.ok(Number(held.n) < 4 * 2 ** 30);

  // Node B hears of the deletions on the Bus (and reads the sum again itself at most a second later): room at once.
  let again = await send(b);
  const until = Date.now() + 3000;
  while (again.status === 409 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    again = await send(b);
  }
  assert.equal(again.status, 202, `the account holds ${held.n} bytes (under 4 GiB) after deleting sessions on node A; node B still answered ${again.status}: ${again.text}`);
});
