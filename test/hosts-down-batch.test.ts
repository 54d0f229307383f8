// Many channels closing at once (a node's hosts losing their network, a CPU
// stall that makes them all late) end their open runs with a query per batch
// of hosts, not one per host: one query per host took every pool connection in
// bench/hosts-cluster.ts, and upgrades then failed on the pool timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapHubQueries } from './helpers/hub.js';
import { hubWithHosts } from './helpers/hosts-hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';
import type { FrameOf, HubToHost } from '../host-protocol/frames.js';

const HOSTS = 20;
const s = hubWithHosts();

/**
 * Routes the down pass's lookup of closed hosts' open runs through `wrap` until the returned restore is
 * called (every statement, through knex or not, is a node-postgres Client's query).
 */
function onDownLookup(wrap: (run: () => Promise<unknown>) => Promise<unknown>): () => void {
  return wrapHubQueries(s.t.hub, (q, send) =>
    /select id, host_id, session_id, agent_id, engine from session_tasks\s+where host_id = any/.test(q.text) ? wrap(send as () => Promise<unknown>) : send());
}

test('channels closing together end their runs with one lookup per batch of hosts', { timeout: 90_000 }, async () => {
  const { t, hosts } = s;
  const u = await t.user();
  const c = t.client(u.key);
  const sessions: string[] = [];
  for (let i = 0; i < HOSTS; i++) {
    const { hostId, credential } = await pairHost(t, u.key, `drop-${i}`);
    const host = await connectFakeHost(t, credential);
    hosts.push(host);
    const agent = await agentWhenReady(c, { name: `drop-${i}`, scope: 'private', hostId, engine: 'claude-code' }, 10_000);
    sessions.push(((await c.sessions.create({ agentId: agent.id, content: 'hello' })) as AcceptedRun).sessionId);
  }
  await Promise.all(hosts.map((h) => h.next((f) => f.t === 'run.start')));

  // Counts the lookups of a closed host's open runs.
  let lookups = 0;
  const restore = onDownLookup((run) => (lookups++, run()));
  try {
    for (const h of hosts) h.ws.terminate();
    for (const id of sessions) {
      await eventually(async () => {
        const s = await c.sessions.get(id);
        return s.status !== 'processing' ? s : undefined;
      }, 20_000, 100);
    }
  } finally {
    restore();
  }
  assert.ok(lookups >= 1 && lookups <= 3, `${lookups} lookups for ${HOSTS} hosts closing together`);
  const [{ n }] = await t.hub.ctx.em().getConnection().execute<Array<{ n: string }>>(`select count(*) as n from session_tasks where status = 'failed' and error_code = 'HOST_DISCONNECTED' and session_id in (${sessions.map(() => '?').join(', ')})`, sessions);
  assert.equal(Number(n), HOSTS);
});

test('a host that reconnects before the down pass ends its runs keeps them', { timeout: 60_000 }, async () => {
  const { t, hosts } = s;
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key, 'bounce');
  const first = await connectFakeHost(t, credential);
  hosts.push(first);
  const agent = await agentWhenReady(c, { name: 'bounce', scope: 'private', hostId, engine: 'claude-code' }, 10_000);
  const { sessionId } = (await c.sessions.create({ agentId: agent.id, content: 'hello' })) as AcceptedRun;
  const start = await first.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start');

  // The pass over the closed channel is held (a busy pass, a slow database) while the host comes back.
  let reached!: () => void;
  const inPass = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const restore = onDownLookup(async (run) => {
    reached();
    await released;
    return run();
  });
  try {
    first.ws.terminate();
    await inPass;
    const again = await connectFakeHost(t, credential, { running: [start.runId] });
    hosts.push(again);
    release();
    // The held pass goes on and ends (its run ends, if any, awaited inside it).
    const down = (t.hub.runFrames.scheduler as unknown as { down: { downPass: boolean } }).down;
    await eventually(async () => !down.downPass, 10_000, 5);
  } finally {
    release();
    restore();
  }
  const [task] = await t.hub.ctx.em().getConnection().execute<Array<{ status: string; error_code: string | null }>>(
    'select status, error_code from session_tasks where id = ?', [start.runId]);
  assert.deepEqual(task, { status: 'running', error_code: null }, 'the reconnected host still runs it');
  assert.equal((await c.sessions.get(sessionId)).status, 'processing');
});
