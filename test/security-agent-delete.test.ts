// Issue 10, hole 14: deleting an agent stops its sessions' engine processes
// (PID gone) before the rows go, and the host's running count drops only once
// they have stopped. A real hub, the real agent-host CLI and the fake engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, pidAlive, fakeEngineRuns, type AgentHostProcess } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sec-agent-delete-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');
const S = '/api/v1/sessions';

let t: TestHub;
let host: AgentHostProcess;
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let hostId: string;

const claudeRuns = () => fakeEngineRuns(logFile);
const runOf = (prompt: string) => eventually(async () => claudeRuns().find((r) => r.prompt === prompt), 15_000, 25);
const alive = pidAlive;
const running = async () => ((await t.api('GET', '/api/v1/hosts', { token: owner.key })).body.data.items as any[]).find((h) => h.id === hostId)?.running;

async function newAgent(name: string): Promise<string> {
  const a = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, hostId, engine: 'claude-code', workDir: 'proj' } });
  assert.equal(a.status, 201, a.text);
  const id = a.body.data.id;
  const { token } = (await t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}/share-link`, { token: owner.key })).body.data;
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: guest.key, body: { accept: true } })).status, 200);
  return id;
}

before(async () => {
  t = await startTestHub();
  owner = await t.user('del-owner');
  guest = await t.user('del-guest');
  const pk = await t.api('POST', '/api/v1/hosts/pair-key', { token: owner.key });
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk.body.data.pairKey, '--work-root', workRoot, '--capacity', '3', '--name', 'del'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  const line = await host.waitFor(/connected to \S+ as (\S+)/);
  hostId = line.match(/as (\S+)/)![1];
  await eventually(async () => (await running()) === 0);
});
after(async () => {
  host?.kill('SIGKILL');
  for (const r of claudeRuns()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL');
  await t?.close();
});

test('DELETE /agents/{id} answers only after the engines of its running sessions are gone; queued messages never run', async () => {
  const agentId = await newAgent('doomed');
  const a = await t.api('POST', S, { token: owner.key, body: { agentId, content: 'owner turn [sleep:60000]' } });
  const b = await t.api('POST', S, { token: guest.key, body: { agentId, content: 'guest turn [sleep:60000]' } });
  assert.equal(a.status, 202, a.text);
  assert.equal(b.status, 202, b.text);
  const q = await t.api('POST', `${S}/${b.body.sessionId}/messages`, { token: guest.key, body: { content: 'queued behind [sleep:60000]' } });
  assert.equal(q.body.status, 'queued');
  const pids = [(await runOf('owner turn [sleep:60000]')).pid, (await runOf('guest turn [sleep:60000]')).pid];
  for (const pid of pids) assert.ok(alive(pid));
  await eventually(async () => (await running()) === 2);

  const d = await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: owner.key });
  assert.equal(d.status, 204, d.text);
  for (const pid of pids) assert.equal(alive(pid), false, `engine ${pid} still running after the agent was deleted`);
  assert.equal((await t.api('GET', `${S}/${a.body.sessionId}`, { token: owner.key })).status, 404);
  await eventually(async () => (await running()) === 0, 5000, 25);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(claudeRuns().filter((r) => r.prompt.startsWith('queued behind')).length, 0, 'a queued message of the deleted agent never starts');
});

test('an engine that ignores SIGINT is killed within the bound before the delete answers', async () => {
  const agentId = await newAgent('stubborn');
  const a = await t.api('POST', S, { token: owner.key, body: { agentId, content: 'stubborn [ignore-sigint] [sleep:60000]' } });
  assert.equal(a.status, 202, a.text);
  const { pid } = await runOf('stubborn [ignore-sigint] [sleep:60000]');
  await eventually(async () => (await running()) === 1);
  const started = Date.now();
  const d = await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: owner.key });
  assert.equal(d.status, 204, d.text);
  assert.equal(alive(pid), false, 'the engine was SIGKILLed after the grace and the hub waited for it');
  assert.ok(Date.now() - started < 10_000);
  await eventually(async () => (await running()) === 0, 5000, 25);
});

test('the host\'s running count does not drop while the engine is still stopping', async () => {
  const agentId = await newAgent('counted');
  const a = await t.api('POST', S, { token: owner.key, body: { agentId, content: 'counted [ignore-sigint] [sleep:60000]' } });
  assert.equal(a.status, 202, a.text);
  const { pid } = await runOf('counted [ignore-sigint] [sleep:60000]');
  await eventually(async () => (await running()) === 1);
  const del = t.api('DELETE', `/api/v1/agents/${encodeURIComponent(agentId)}`, { token: owner.key });
  // While the engine ignores SIGINT (3 s until SIGKILL), the host still counts it.
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(alive(pid));
  assert.equal(await running(), 1, 'the slot is still taken while the engine runs');
  assert.equal((await del).status, 204);
  assert.equal(alive(pid), false);
  await eventually(async () => (await running()) === 0, 5000, 25);
});
