// Lock order under load: bursts of messages and run ends over many sessions
// of several agents on one host, on PostgreSQL. Every transaction on the
// session path takes its row locks in one order (sessions, their tasks, then
// agents sorted; hosts after sessions), so PostgreSQL never has to break a
// deadlock (each one costs its victims deadlock_timeout, a second, and a
// retry). The agents' counters stay exact when a batch folds many runs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import type { SessionView } from '../src/client/index.js';

const skip = (await clusterSkipReason({ redis: false })) && 'DATABASE_URL is not set (deadlocks need concurrent connections; embedded PGlite has one)';

const nodes = useCluster(skip, [{}], { redis: false });
let host: FakeHost | undefined;
after(() => host?.close());

async function deadlocks(): Promise<number> {
  const conn = nodes.hubs[0].hub.ctx.em().getConnection();
  await conn.execute(`select pg_stat_clear_snapshot()`);
  const r = await conn.execute(`select deadlocks from pg_stat_database where datname = current_database()`);
  return Number(r[0].deadlocks);
}

test('bursts of sends and run ends across agents cause no deadlock, and the counters stay exact', { skip, timeout: 90_000 }, async () => {
  const [t] = nodes.hubs;
  const AGENTS = 6;
  const PER_AGENT = 6;
  const ROUNDS = 8;
  const u = await t.user();
  const { credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: AGENTS * PER_AGENT });
  const h = host;
  h.ws.on('message', (data: Buffer) => {
    const f = decodeHubFrame(data).frame as any;
    // Ends spread over a few milliseconds: several end batches in flight at once, as under real load.
    if (f?.t === 'run.start') setTimeout(() => h.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } }), Math.random() * 8);
  });
  const c = t.client(u.key);
  const agents: string[] = [];
  for (let i = 0; i < AGENTS; i++) {
    agents.push((await agentWhenReady(c, { name: `lock-${i}`, scope: 'private', hostId: h.hostId, engine: 'claude-code' }, 10_000)).id);
  }
  const sessions: string[] = [];
  for (let i = 0; i < AGENTS * PER_AGENT; i++) {
    sessions.push(((await c.sessions.create({ agentId: agents[i % AGENTS] })) as SessionView).id);
  }
  const before = await deadlocks();
  // Rounds a few milliseconds apart, not awaited: sends, claims and ends overlap.
  const sends = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of sessions) sends.push(c.sessions.send(s, { content: `round ${r}` }));
    await new Promise((res) => setTimeout(res, 10));
  }
  const answers = await Promise.all(sends); // each a 202 (the client throws on any other answer)
  for (const a of answers) assert.ok(a.status === 'processing' || a.status === 'queued', JSON.stringify(a));
  const sent = answers.length;
  const conn = t.hub.ctx.em().getConnection();
  await eventually(async () => {
    const r = await conn.execute(`select count(*) as c from session_tasks where status = 'completed'`);
    return Number(r[0].c) === sent;
  }, 30_000, 50);
  // Backends report their statistics within a second of going idle.
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(await deadlocks(), before, 'PostgreSQL broke a deadlock on the session path');
  // Each agent ran PER_AGENT sessions × ROUNDS turns; cost = 1 + 1 × 2 per turn.
  const counters = await conn.execute(`select id, runs, cost from agents where id in (${agents.map(() => '?').join(', ')})`, agents);
  for (const c of counters) {
    assert.equal(Number(c.runs), PER_AGENT * ROUNDS, `runs of ${c.id}`);
    assert.equal(Number(c.cost), PER_AGENT * ROUNDS * 3, `cost of ${c.id}`);
  }
});
