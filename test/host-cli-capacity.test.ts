// The owner runs `agent-host run --capacity 1`: one engine at a time on this machine. The hub is
// meant to respect that (it counts slots), but agent-host does not check it at all: every run.start
// the hub sends starts an engine, so a buggy hub (a slot freed twice, a race between nodes) or a
// compromised one runs as many strangers' engines at once on the owner's machine as it likes.
// agent-host is the last line of defence for the limit its owner typed: a run.start past its own
// capacity must be refused (a run.end with an error), not started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeEngineRuns, pidAlive, spawnAgentHost } from './helpers/host.js';
import { startMiniHub } from './helpers/mini-hub.js';
import { savePairing } from '../src/host-cli/home.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));

test('agent-host started with --capacity 1 runs one engine at a time, whatever the hub sends', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'audit-capacity-'));
  mkdirSync(join(root, 'proj'));
  const home = mkdtempSync(join(tmpdir(), 'audit-capacity-home-'));
  const logFile = join(root, 'claude.log');
  const N = 4;
  const hub = await startMiniHub({
    onFrame: (f, h) => {
      if (f.t !== 'hello') return;
      for (let i = 0; i < N; i++) {
        h.send({ t: 'run.start', runId: `run_${i}`, sessionId: `ses_${i}`, engine: 'claude-code', prompt: `a long turn [sleep:20000]`, workDir: 'proj', mode: 'default', guest: true });
      }
    },
  });
  savePairing({ hub: hub.url, hostId: 'hst_mini', credential: 'ahh_x', name: 'owner' }, { AGENT_HOST_HOME: home });
  const host = spawnAgentHost(['run', '--work-root', root, '--capacity', '1'], { AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile });
  t.after(async () => {
    host.proc.kill('SIGKILL');
    for (const r of fakeEngineRuns(logFile)) if (pidAlive(r.pid)) process.kill(r.pid, 'SIGKILL');
    await hub.close();
  });
  // Every run.start is answered: the first one streams, the others must end refused.
  await hub.frames.until((f) => f.t === 'run.delta' && f.runId === 'run_0', 20_000, () => host.output());
  await new Promise((r) => setTimeout(r, 1500)); // time for the other engines to start, if they do
  const engines = fakeEngineRuns(logFile).filter((r) => pidAlive(r.pid));
  assert.equal(engines.length, 1, `${engines.length} engines run at once on a host of capacity 1`);
  for (let i = 1; i < N; i++) {
    const end = await hub.frames.until((f) => f.t === 'run.end' && f.runId === `run_${i}`, 10_000, () => host.output()).catch(() => undefined);
    assert.ok(end && end.t === 'run.end' && end.ok === false, `run_${i} past the capacity was refused with a run.end`);
  }
});
