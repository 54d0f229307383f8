// Exactly-once claiming across nodes: two hubs in this process on one
// PostgreSQL database and one Redis, messages for many sessions sent to both
// at once, one host of capacity 3 on node A. Every task is started exactly
// once and the host never holds more runs than its capacity, though both
// nodes claim (FOR UPDATE SKIP LOCKED in sessions/queue.ts) at the same time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { decodeHubFrame } from '../host-protocol/index.js';
import type { SessionView } from '../src/client/index.js';

const skip = await clusterSkipReason();

const nodes = useCluster(skip, [{ nodeId: 'claim-a' }, { nodeId: 'claim-b' }]);
let host: FakeHost | undefined;
after(() => host?.close());

test('two nodes claiming at once start each task exactly once, within the host capacity', { skip, timeout: 60_000 }, async () => {
  const [a, b] = nodes.hubs;
  const CAPACITY = 3;
  const SESSIONS = 16;
  const ROUNDS = 3;
  const u = await a.user();
  const { credential } = await pairHost(a, u.key);
  const starts: string[] = [];
  let running = 0;
  let peak = 0;
  host = await connectFakeHost(a, credential, { capacity: CAPACITY });
  const h = host;
  h.ws.on('message', (data: Buffer) => {
    // Decode this message itself: the helper does not list pongs, so its last frame may be an older run.start.
    const f = decodeHubFrame(data).frame as any;
    if (f?.t !== 'run.start' || starts.includes(f.runId)) {
      if (f?.t === 'run.start') starts.push(f.runId); // a second start of one run: recorded, fails below
      return;
    }
    starts.push(f.runId);
    running++;
    peak = Math.max(peak, running);
    setTimeout(() => {
      running--;
      h.send({ t: 'run.end', runId: f.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    }, 30);
  });
  const ca = a.client(u.key);
  const cb = b.client(u.key);
  const agent = await agentWhenReady(ca, { name: 'claims', scope: 'private', hostId: h.hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const sessions: string[] = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(((await ca.sessions.create({ agentId: agent.id })) as SessionView).id);

  // All messages at once, half through each node.
  const sends = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < SESSIONS; i++) {
      const node = (i + r) % 2 ? cb : ca;
      sends.push(node.sessions.send(sessions[i], { content: `r${r} s${i}` }));
    }
  }
  const answers = await Promise.all(sends); // each a 202 (the client throws on any other answer)
  const taskIds = answers.map((r) => r.taskId);
  assert.equal(new Set(taskIds).size, SESSIONS * ROUNDS);

  await eventually(async () => {
    const rows = await a.hub.ctx.em().getConnection().execute(`select status, count(*)::int as n from session_tasks group by status`);
    const done = rows.find((x: any) => x.status === 'completed')?.n ?? 0;
    return done === SESSIONS * ROUNDS;
  }, 30_000, 100);
  assert.equal(starts.length, SESSIONS * ROUNDS, 'each task started once, no more');
  assert.deepEqual([...starts].sort(), [...taskIds].sort());
  assert.ok(peak <= CAPACITY, `the host held ${peak} runs at once (capacity ${CAPACITY})`);
  // The capacity counter is right on both nodes once everything ended elsewhere.
  // The count is recounted shortly after the last run's end commits (scheduler.ts countSoon), so wait briefly.
  for (const t of [a, b]) {
    const c = t.client(u.key);
    const hv = await eventually(async () => {
      const v = await c.hosts.get(h.hostId!);
      return v.running === 0 ? v : undefined;
    }, 2000, 20).catch(() => c.hosts.get(h.hostId!));
    assert.equal(hv.running, 0);
    assert.equal(hv.status, 'online');
  }
});
