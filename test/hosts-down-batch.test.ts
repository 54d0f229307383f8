// Many channels closing at once (a node's hosts losing their network, a CPU
// stall that makes them all late) end their open runs with a query per batch
// of hosts, not one per host: one query per host took every pool connection in
// bench/hosts-cluster.ts, and upgrades then failed on the pool timeout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { LOST_RUN_GRACE_MS } from '../src/sessions/scheduler.js';
import type { AcceptedRun } from '../src/client/index.js';

const HOSTS = 20;
let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.ws.terminate();
  await t.close();
});

test('channels closing together end their runs with one lookup per batch of hosts', { timeout: 90_000 }, async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const sessions: string[] = [];
  for (let i = 0; i < HOSTS; i++) {
    const { hostId, credential } = await pairHost(t, u.key, `drop-${i}`);
    const host = await connectFakeHost(t, credential);
    hosts.push(host);
    const agent = await eventually(() => c.agents.create({ name: `drop-${i}`, scope: 'private', hostId, engine: 'claude-code' }));
    sessions.push(((await c.sessions.create({ agentId: agent.id, content: 'hello' })) as AcceptedRun).sessionId);
  }
  await Promise.all(hosts.map((h) => h.next((f) => f.t === 'run.start')));
  await new Promise((r) => setTimeout(r, LOST_RUN_GRACE_MS + 300)); // past the hello's grace: the runs are the hosts' own

  // Counts the lookups of a closed host's open runs (the hello's look-up is done by now).
  const conn = t.hub.ctx.em().getConnection();
  const execute = conn.execute.bind(conn);
  let lookups = 0;
  conn.execute = ((sql: string, ...rest: unknown[]) => {
    if (/host_id (=|in)/.test(sql) && /status in \('running', 'aborted'\) and ended_at is null/.test(sql)) lookups++;
    return (execute as (...a: unknown[]) => unknown)(sql, ...rest);
  }) as typeof conn.execute;
  try {
    for (const h of hosts) h.ws.terminate();
    for (const id of sessions) {
      await eventually(async () => {
        const s = await c.sessions.get(id);
        return s.status !== 'processing' ? s : undefined;
      }, 20_000, 100);
    }
  } finally {
    conn.execute = execute;
  }
  assert.ok(lookups >= 1 && lookups <= 3, `${lookups} lookups for ${HOSTS} hosts closing together`);
  const [{ n }] = await execute<Array<{ n: string }>>(`select count(*) as n from session_tasks where status = 'failed' and error_code = 'HOST_DISCONNECTED' and session_id in (${sessions.map(() => '?').join(', ')})`, sessions);
  assert.equal(Number(n), HOSTS);
});
