// agent-host now refuses a run.start past its --capacity (HOST_AT_CAPACITY),
// counting the runs whose engine has not yet exited. The hub frees a run's slot the moment it ends the
// run itself — a run over its output bound (OUTPUT_TOO_LARGE) or its session over its bytes
// (SESSION_FULL): run-end writes the end, the slot is free and the host's next waiting message is started
// in the same statement, while the host is still stopping that engine (SIGINT, SIGKILL after its 3-s grace).
// Only a user's abort keeps the slot held until then (engine_until). So an innocent waiting message of
// another session is sent to a host that, by its own count, is full: it fails instead of starting.
// Real hub, real agent-host (--capacity 1), the fake engine ignoring SIGINT as a busy engine may.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import type { AcceptedRun } from '../src/client/index.js';
import { spawnAgentHost, eventually, pidAlive, fakeEngineRuns, agentWhenReady, type AgentHostProcess } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'review47-cap-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');

let t: TestHub;
let host: AgentHostProcess;
before(async () => {
  t = await startTestHub({ engineStopGraceMs: 10_000, runOutputMaxBytes: 64 * 1024, runStoredMaxBytes: 64 * 1024 });
});
after(async () => {
  host?.kill('SIGKILL');
  for (const r of fakeEngineRuns(logFile)) if (pidAlive(r.pid)) process.kill(r.pid, 'SIGKILL');
  await t?.close();
});

test("a message waiting for the host's one slot starts after a run the hub ended for its output", { timeout: 60_000 }, async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const pk = await c.hosts.pairKey();
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk.pairKey, '--work-root', workRoot, '--capacity', '1', '--name', 'cap'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  const hostId = (await host.waitFor(/connected to \S+ as (\S+)/)).match(/as (\S+)/)![1];
  const a = await agentWhenReady(c, { name: 'cap', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000);

  // Session A: a turn whose output passes the run's bound, and whose engine is slow to stop.
  const big = (await c.sessions.create({ agentId: a.id, content: 'flood [big:200000] [ignore-sigint] [sleep:20000]' })) as AcceptedRun;
  await eventually(async () => fakeEngineRuns(logFile).find((r) => r.prompt.includes('flood')), 10_000, 25);
  // Session B: waits for the host's one slot.
  const waiting = (await c.sessions.create({ agentId: a.id, content: 'an innocent question' })) as AcceptedRun;
  assert.equal(waiting.queueReason, 'host_capacity');

  const sql = t.hub.ctx.em().getConnection();
  const taskOf = async (sid: string) => (await sql.execute(`select status, error_code from session_tasks where session_id = ? order by n desc limit 1`, [sid]))[0];
  await eventually(async () => ((await taskOf(big.sessionId))?.status === 'failed' ? true : undefined), 15_000, 50);
  const b = await eventually(async () => {
    const r = await taskOf(waiting.sessionId);
    return r && r.status !== 'queued' && r.status !== 'running' ? r : undefined;
  }, 30_000, 100);
  assert.equal(b.status, 'completed', `the waiting message ended ${b.status} ${b.error_code ?? ''} (the hub started it while agent-host still stopped the other engine)`);
});
