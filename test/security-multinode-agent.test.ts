// Issue 10, holes 1 and 14 across two hub nodes (one PostgreSQL, one Redis):
// the host's channel is held by node A while the owner talks to node B.
// - Deleting the agent on B stops the engine on the host held by A (the
//   run.abort request and its reply cross the Bus) before B answers.
// - Lowering the ceiling on B caps a guest's waiting message dispatched by A.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { spawnAgentHost, pairHost, connectFakeHost, eventually, pidAlive, fakeEngineRuns, agentWhenReady, type AgentHostProcess } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

const skip = await clusterSkipReason();
const nodes = useCluster(skip, [{ nodeId: 'sec-a' }, { nodeId: 'sec-b' }]);

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sec-multinode-agent-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');
const claudeRuns = () => fakeEngineRuns(logFile);
const alive = pidAlive;
/** A session started with its first message: the plain 202 of its run. */
async function started(p: Promise<SessionView | AcceptedRun>): Promise<AcceptedRun> {
  const r = (await p) as AcceptedRun;
  assert.ok(r.sessionId && r.taskId, 'a 202 with the run');
  return r;
}

test('an agent deleted on node B: the engine on the host held by node A is gone when B answers', { skip }, async (tt) => {
  const [A, B] = nodes.hubs;
  const owner = await A.user('mn-del-owner');
  const onA = A.client(owner.key);
  const onB = B.client(owner.key);
  const pk = await onA.hosts.pairKey();
  let host: AgentHostProcess | undefined = spawnAgentHost(['run', '--hub', A.url, '--pair-key', pk.pairKey, '--work-root', workRoot, '--capacity', '2', '--name', 'mn'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  tt.after(() => {
    host?.kill('SIGKILL');
    for (const r of claudeRuns()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL');
    host = undefined;
  });
  const hostId = (await host.waitFor(/connected to \S+ as (\S+)/)).match(/as (\S+)/)![1];
  const { id: agentId } = await agentWhenReady(onB, { name: 'mn-doomed', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000);
  await started(onB.sessions.create({ agentId, content: 'cross node [ignore-sigint] [sleep:60000]' }));
  const { pid } = await eventually(async () => claudeRuns().find((r) => r.prompt === 'cross node [ignore-sigint] [sleep:60000]'), 15_000, 25);
  assert.ok(alive(pid));
  assert.equal(await onB.agents.remove(agentId), undefined, 'a 204 without a body');
  assert.equal(alive(pid), false, 'the engine is gone before node B answers');
  const running = async () => (await onA.hosts.list()).items.find((h) => h.id === hostId)?.running;
  await eventually(async () => (await running()) === 0, 5000, 25);
});

test('the ceiling lowered on node B caps a waiting message that node A dispatches', { skip }, async () => {
  const [A, B] = nodes.hubs;
  const owner = await A.user('mn-mode-owner');
  const guest = await A.user('mn-mode-guest');
  const onA = A.client(owner.key);
  const onB = B.client(owner.key);
  const guestA = A.client(guest.key);
  const { credential, hostId } = await pairHost(A, owner.key, 'mn-fake');
  const h = await connectFakeHost(A, credential, { capacity: 1 });
  try {
    const { id: agentId } = await agentWhenReady(onA, { name: 'mn-modes', hostId, engine: 'claude-code', maxGuestMode: 'auto' }, 10_000);
    const { token } = await onA.agents.shareLink(agentId);
    await guestA.invites.decide(token, true);
    const hold = await started(onA.sessions.create({ agentId, content: 'hold' }));
    await h.next((f) => f.t === 'run.start' && (f as any).runId === hold.taskId);
    const g = await started(guestA.sessions.create({ agentId, mode: 'auto', content: 'waits' }));
    assert.equal(g.status, 'queued');
    await onB.agents.update(agentId, { maxGuestMode: 'default' });
    // Node A learns the new ceiling over the Bus; its dispatch of the waiting message is capped.
    await eventually(async () => (await onA.agents.manage(agentId)).maxGuestMode === 'default', 3000, 10);
    h.send({ t: 'run.end', runId: hold.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    const start: any = await h.next((f) => f.t === 'run.start' && (f as any).runId === g.taskId, 10_000);
    assert.equal(start.mode, 'default');
    h.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  } finally {
    h.close();
  }
});
