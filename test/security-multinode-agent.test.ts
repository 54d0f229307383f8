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
import { spawnAgentHost, pairHost, connectFakeHost, eventually, pidAlive, fakeEngineRuns, type AgentHostProcess } from './helpers/host.js';

const skip = await clusterSkipReason();
const nodes = useCluster(skip, [{ nodeId: 'sec-a' }, { nodeId: 'sec-b' }]);

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sec-multinode-agent-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');
const claudeRuns = () => fakeEngineRuns(logFile);
const alive = pidAlive;

test('an agent deleted on node B: the engine on the host held by node A is gone when B answers', { skip }, async (tt) => {
  const [A, B] = nodes.hubs;
  const owner = await A.user('mn-del-owner');
  const pk = await A.api('POST', '/api/v1/hosts/pair-key', { token: owner.key });
  let host: AgentHostProcess | undefined = spawnAgentHost(['run', '--hub', A.url, '--pair-key', pk.body.data.pairKey, '--work-root', workRoot, '--capacity', '2', '--name', 'mn'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  tt.after(() => {
    host?.kill('SIGKILL');
    for (const r of claudeRuns()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL');
    host = undefined;
  });
  const hostId = (await host.waitFor(/connected to \S+ as (\S+)/)).match(/as (\S+)/)![1];
  const a = await eventually(async () => {
    const r = await B.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'mn-doomed', hostId, engine: 'claude-code', workDir: 'proj' } });
    return r.status === 201 ? r : undefined;
  });
  const agentId = a.body.data.id;
  const s = await B.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId, content: 'cross node [ignore-sigint] [sleep:60000]' } });
  assert.equal(s.status, 202, s.text);
  const { pid } = await eventually(async () => claudeRuns().find((r) => r.prompt === 'cross node [ignore-sigint] [sleep:60000]'), 15_000, 25);
  assert.ok(alive(pid));
  const d = await B.api('DELETE', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: owner.key });
  assert.equal(d.status, 204, d.text);
  assert.equal(alive(pid), false, 'the engine is gone before node B answers');
  const running = async () => ((await A.api('GET', '/api/v1/hosts', { token: owner.key })).body.data.items as any[]).find((h) => h.id === hostId)?.running;
  await eventually(async () => (await running()) === 0, 5000, 25);
});

test('the ceiling lowered on node B caps a waiting message that node A dispatches', { skip }, async () => {
  const [A, B] = nodes.hubs;
  const owner = await A.user('mn-mode-owner');
  const guest = await A.user('mn-mode-guest');
  const { credential, hostId } = await pairHost(A, owner.key, 'mn-fake');
  const h = await connectFakeHost(A, credential, { capacity: 1 });
  try {
    const c = await eventually(async () => {
      const r = await A.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'mn-modes', hostId, engine: 'claude-code', maxGuestMode: 'auto' } });
      return r.status === 201 ? r : undefined;
    });
    const agentId = c.body.data.id;
    const path = `/api/v1/agents/${encodeURIComponent(agentId)}`;
    const { token } = (await A.api('GET', `${path}/share-link`, { token: owner.key })).body.data;
    assert.equal((await A.api('POST', `/api/v1/invites/${token}/decide`, { token: guest.key, body: { accept: true } })).status, 200);
    const hold = await A.api('POST', '/api/v1/sessions', { token: owner.key, body: { agentId, content: 'hold' } });
    assert.equal(hold.status, 202, hold.text);
    await h.next((f) => f.t === 'run.start' && (f as any).runId === hold.body.taskId);
    const g = await A.api('POST', '/api/v1/sessions', { token: guest.key, body: { agentId, mode: 'auto', content: 'waits' } });
    assert.equal(g.status, 202, g.text);
    assert.equal(g.body.status, 'queued');
    assert.equal((await B.api('PATCH', path, { token: owner.key, body: { maxGuestMode: 'default' } })).status, 200);
    // Node A learns the new ceiling over the Bus; its dispatch of the waiting message is capped.
    await eventually(async () => (await A.api('GET', `${path}/manage`, { token: owner.key })).body.data.maxGuestMode === 'default', 3000, 10);
    h.send({ t: 'run.end', runId: hold.body.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
    const start: any = await h.next((f) => f.t === 'run.start' && (f as any).runId === g.body.taskId, 10_000);
    assert.equal(start.mode, 'default');
    h.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  } finally {
    h.close();
  }
});
