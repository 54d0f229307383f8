// Issue 10, hole 14: deleting an agent stops its sessions' engine processes
// (PID gone) before the rows go, and the host's running count drops only once
// they have stopped. A real hub, the real agent-host CLI and the fake engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, pidAlive, fakeEngineRuns, type AgentHostProcess } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';
import type { AcceptedRun, Client } from '../src/client/index.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sec-agent-delete-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');

let t: TestHub;
let host: AgentHostProcess;
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let oc: Client;
let gc: Client;
let hostId: string;

const claudeRuns = () => fakeEngineRuns(logFile);
/** Pids of engines that got a SIGINT and ignored it (fake-claude's [ignore-sigint]). */
const sigintsIgnored = () => (existsSync(`${logFile}.sigint`) ? readFileSync(`${logFile}.sigint`, 'utf8').split('\n').filter(Boolean).map(Number) : []);
const runOf = (prompt: string) => eventually(async () => claudeRuns().find((r) => r.prompt === prompt), 15_000, 25);
const alive = pidAlive;
const running = async () => (await oc.hosts.list()).items.find((h) => h.id === hostId)?.running;
/** A session started with its first message: the plain 202 of its run. */
async function start(c: Client, agentId: string, content: string): Promise<AcceptedRun> {
  const r = (await c.sessions.create({ agentId, content })) as AcceptedRun;
  assert.ok(r.sessionId && r.taskId, 'a 202 with the run');
  return r;
}

async function newAgent(name: string): Promise<string> {
  const { id } = await oc.agents.create({ name, hostId, engine: 'claude-code', workDir: 'proj' });
  const { token } = await oc.agents.shareLink(id);
  await gc.invites.decide(token, true);
  return id;
}

before(async () => {
  t = await startTestHub();
  owner = await t.user('del-owner');
  guest = await t.user('del-guest');
  oc = t.client(owner.key);
  gc = t.client(guest.key);
  const pk = await oc.hosts.pairKey();
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk.pairKey, '--work-root', workRoot, '--capacity', '3', '--name', 'del'], {
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
  const a = await start(oc, agentId, 'owner turn [sleep:60000]');
  const b = await start(gc, agentId, 'guest turn [sleep:60000]');
  const q = await gc.sessions.send(b.sessionId, { content: 'queued behind [sleep:60000]' });
  assert.equal(q.status, 'queued');
  const pids = [(await runOf('owner turn [sleep:60000]')).pid, (await runOf('guest turn [sleep:60000]')).pid];
  for (const pid of pids) assert.ok(alive(pid));
  await eventually(async () => (await running()) === 2);

  assert.equal(await oc.agents.remove(agentId), undefined, 'a 204 without a body');
  for (const pid of pids) assert.equal(alive(pid), false, `engine ${pid} still running after the agent was deleted`);
  await assert.rejects(oc.sessions.get(a.sessionId), apiError(404));
  await eventually(async () => (await running()) === 0, 5000, 25);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(claudeRuns().filter((r) => r.prompt.startsWith('queued behind')).length, 0, 'a queued message of the deleted agent never starts');
});

test('an engine that ignores SIGINT is killed within the bound before the delete answers', async () => {
  const agentId = await newAgent('stubborn');
  await start(oc, agentId, 'stubborn [ignore-sigint] [sleep:60000]');
  const { pid } = await runOf('stubborn [ignore-sigint] [sleep:60000]');
  await eventually(async () => (await running()) === 1);
  const started = Date.now();
  assert.equal(await oc.agents.remove(agentId), undefined, 'a 204 without a body');
  assert.equal(alive(pid), false, 'the engine was SIGKILLed after the grace and the hub waited for it');
  assert.ok(Date.now() - started < 10_000);
  await eventually(async () => (await running()) === 0, 5000, 25);
});

test('the host\'s running count does not drop while the engine is still stopping', async () => {
  const agentId = await newAgent('counted');
  await start(oc, agentId, 'counted [ignore-sigint] [sigint-stops-host] [sleep:60000]');
  const { pid } = await runOf('counted [ignore-sigint] [sigint-stops-host] [sleep:60000]');
  await eventually(async () => (await running()) === 1);
  const del = oc.agents.remove(agentId);
  // The engine ignores its SIGINT and holds agent-host still (SIGSTOP) as it gets it: the SIGKILL
  // due 3 s later cannot come while the slot is looked at, however slow this machine is, and a
  // count dropped by the deletion itself (not by the run's end) has a second to show.
  try {
    await eventually(async () => sigintsIgnored().includes(pid), 15_000, 25);
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(alive(pid));
    assert.equal(await running(), 1, 'the slot is still taken while the engine runs');
  } finally {
    host.proc.kill('SIGCONT');
  }
  assert.equal(await del, undefined, 'a 204 without a body');
  assert.equal(alive(pid), false);
  await eventually(async () => (await running()) === 0, 5000, 25);
});
