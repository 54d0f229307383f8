// An engine starts processes of its own (a tool's shell command, a test runner, a dev server).
// When a run is aborted or agent-host must stop it, they go with the engine: the engine runs in
// a process group of its own and the group is signalled, so "the engine is gone" (run.end, and
// the reply to run.abort the hub waits for before deleting an agent) covers them too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { handleFrame, type HostState } from '../src/host-cli/handlers.js';
import type { Channel } from '../src/host-cli/channel.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { eventually, pidAlive } from './helpers/host.js';
import { Arrivals } from './helpers/waiters.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'host-group-'));
mkdirSync(join(root, 'proj'));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
const started = () => readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { pid: number; child: number };
const frame = (prompt: string): RunStartFrame => ({ t: 'run.start', runId: 'run_1', sessionId: 'ses_1', engine: 'claude-code', prompt, workDir: 'proj', mode: 'default' });
const STUBBORN = 'a tool left running [grandchild] [ignore-sigint] [sleep:30000]';

/** Starts a stubborn engine with a subprocess; resolves once it streams, with the handle and its pids. */
async function startStubborn() {
  const frames = new Arrivals<HostToHub>('runner: frame');
  const alive: Array<{ pid: number; child: number; atEnd: [boolean, boolean] }> = [];
  const h = startRun(frame(STUBBORN), { workRoot: root, claudeBin: FAKE, killGraceMs: 300 }, (f) => {
    if (f.t === 'run.end') {
      const s = started();
      alive.push({ ...s, atEnd: [pidAlive(s.pid), pidAlive(s.child)] });
    }
    frames.push(f);
  });
  await frames.until((f) => f.t === 'run.delta', 10_000);
  const pids = started();
  assert.ok(pidAlive(pids.child), 'the engine started its subprocess');
  return { h, frames, pids, alive };
}

test('an aborted run ends only once the engine and the processes it started are gone', async (t) => {
  const { h, frames, pids, alive } = await startStubborn();
  t.after(() => [pids.pid, pids.child].forEach((p) => pidAlive(p) && process.kill(p, 'SIGKILL')));
  h.abort();
  await h.done;
  assert.equal((frames.items.at(-1) as any).aborted, true);
  assert.deepEqual(alive[0].atEnd, [false, false], 'engine and subprocess both gone when run.end is sent');
});

test('kill() ends the engine\'s whole group at once', async (t) => {
  const { h, pids } = await startStubborn();
  t.after(() => [pids.pid, pids.child].forEach((p) => pidAlive(p) && process.kill(p, 'SIGKILL')));
  h.kill();
  await h.done;
  assert.equal(pidAlive(pids.pid), false);
  // SIGKILL went to the whole group; a member dies when it is next scheduled, which on a loaded machine
  // may come a few milliseconds after the engine's own exit was reported.
  await eventually(async () => !pidAlive(pids.child) || undefined, 2000, 10);
});

test('run.abort with an id is answered once the engine\'s subprocess is gone too', async (t) => {
  const sent = new Arrivals<HostToHub>('host: frame');
  const ch = { send: (f: HostToHub) => sent.push(f) } as unknown as Channel;
  const s: HostState = { workRoot: root, claudeConfigDir: root, claudeBin: FAKE, engines: [], runs: new Map() };
  handleFrame(frame(STUBBORN), ch, s);
  await sent.until((f) => f.t === 'run.delta', 10_000);
  const pids = started();
  t.after(() => [pids.pid, pids.child].forEach((p) => pidAlive(p) && process.kill(p, 'SIGKILL')));
  handleFrame({ t: 'run.abort', runId: 'run_1', id: 7 }, ch, s);
  await sent.until((f) => f.t === 'reply' && f.id === 7, 15_000);
  assert.equal(pidAlive(pids.pid), false);
  assert.equal(pidAlive(pids.child), false, 'the subprocess did not outlive the answer');
  assert.equal(s.runs.size, 0);
});
