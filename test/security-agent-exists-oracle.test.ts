// Audit (reads, forty-fifth session): POST /sessions answered a stranger's private agent and an id
// nobody holds with the same 404 envelope, but not in the same way: a private
// agent the catalog holds is refused from memory, an unknown id costs a
// database look-up first. The difference is a timing oracle for whether a
// private agent of a guessable id (`<owner prefix>/<name slug>`) exists. A caller who may not read the
// agent the catalog holds is now answered by the database, as for an id it does not hold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, wrapHubQueries, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('POST /sessions: "exists but not yours" and "does not exist" take the same path (no timing oracle)', async () => {
  const owner = await t.user('alice');
  const stranger = await t.user('mallory');
  const hostId = await seedHost(t, owner.id);
  const priv = await t.client(owner.key).agents.create({ name: 'secret-project', hostId, engine: 'claude-code' });
  const missing = 'alice/no-such-project';

  const probe = async (agentId: string) => {
    let agentQueries = 0;
    const restore = wrapHubQueries(t.hub, (q, send) => {
      if (/\bfrom agents\b/i.test(q.text)) agentQueries++;
      return send();
    });
    try {
      const r = await t.api('POST', '/api/v1/sessions', { token: stranger.key, body: { agentId } });
      return { status: r.status, body: r.text, agentQueries };
    } finally {
      restore();
    }
  };
  // Warm both paths.
  await probe(priv.id);
  await probe(missing);
  const a = await probe(priv.id);
  const b = await probe(missing);
  assert.equal(a.status, 404);
  assert.equal(b.status, 404);
  assert.equal(a.body, b.body, 'same envelope');

  // Timing, for the record (medians over many calls).
  const median = async (id: string, n = 150) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = process.hrtime.bigint();
      await t.api('POST', '/api/v1/sessions', { token: stranger.key, body: { agentId: id } });
      xs.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    xs.sort((x, y) => x - y);
    return xs[Math.floor(n / 2)];
  };
  const tp = await median(priv.id);
  const tm = await median(missing);
  console.log(`median ms: private agent of another account ${tp.toFixed(3)}, no such agent ${tm.toFixed(3)}; agent queries ${a.agentQueries} vs ${b.agentQueries}`);

  assert.equal(a.agentQueries, b.agentQueries,
    `a stranger's private agent is refused with ${a.agentQueries} database look-ups of agents, an unknown id with ${b.agentQueries}: the answer's timing tells them apart`);
});
