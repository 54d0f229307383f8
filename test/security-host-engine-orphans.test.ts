// agent-host killed outright (SIGKILL, the OOM killer) cannot stop its engines: they and the
// processes their tools started run on, on the owner's machine, for runs the hub has ended —
// a guest's prompt still at work after its turn. Each agent-host records its engines' process
// groups under $AGENT_HOST_HOME/engines/; the next one to start stops the groups a dead one
// left, and only those (a group id now someone else's is left alone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, pidAlive, spawnAgentHost } from './helpers/host.js';
import { startMiniHub } from './helpers/mini-hub.js';
import { savePairing } from '../src/host-cli/home.js';
import { EngineGroups, processStart } from '../src/host-cli/engine-groups.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'host-orphans-'));
mkdirSync(join(root, 'proj'));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
const LINUX = process.platform === 'linux';

/** A process in a group of its own (as an engine runs), not ours to judge by anything but its group. */
function groupLeader(): number {
  const p = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  p.unref();
  return p.pid!;
}

/** A pid no process has: one that ran and exited. */
async function deadPid(): Promise<number> {
  const p = spawn('true');
  await new Promise((r) => p.on('exit', r));
  return p.pid!;
}

test('an agent-host killed with SIGKILL leaves its engine and the engine\'s subprocess; the next agent-host stops them', { skip: !LINUX && 'process groups are read from /proc' }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'host-orphans-home-'));
  const hub = await startMiniHub({
    onFrame: (f, h) => {
      if (f.t === 'hello' && !h.frames.items.some((x) => x.t === 'run.init')) {
        h.send({ t: 'run.start', runId: 'run_left', sessionId: 's1', engine: 'claude-code', prompt: 'a tool left running [grandchild] [sleep:60000]', workDir: 'proj', mode: 'default' });
      }
    },
  });
  savePairing({ hub: hub.url, hostId: 'hst_mini', credential: 'ahh_x', name: 'victim' }, { AGENT_HOST_HOME: home });
  const env = { AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE };
  const first = spawnAgentHost(['run', '--work-root', root], env);
  let pids: { pid: number; child: number } | undefined;
  t.after(async () => {
    first.proc.kill('SIGKILL');
    for (const p of [pids?.pid, pids?.child]) if (p && pidAlive(p)) process.kill(p, 'SIGKILL');
    await hub.close();
  });
  await hub.frames.until((f) => f.t === 'run.delta' && f.runId === 'run_left', 20_000, () => first.output());
  pids = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1);
  first.proc.kill('SIGKILL');
  await new Promise((r) => first.proc.once('exit', r));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(pidAlive(pids!.pid) && pidAlive(pids!.child), 'both outlived agent-host');

  const second = spawnAgentHost(['run', '--work-root', root], env);
  t.after(() => second.proc.kill('SIGKILL'));
  await second.waitFor(/stopped 1 engine process group left by agent-host pid \d+/, 20_000);
  await eventually(async () => !pidAlive(pids!.pid) && !pidAlive(pids!.child), 5000);
  assert.deepEqual(readdirSync(join(home, 'engines')).filter((f) => !f.includes(String(second.proc.pid))), [], 'the dead one\'s record is gone');
});

test('only groups a dead agent-host recorded, and only while their leader is the process it started', { skip: !LINUX && 'process groups are read from /proc' }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'host-orphans-unit-'));
  const env = { AGENT_HOST_HOME: home };
  const ours = groupLeader();
  const reused = groupLeader(); // its pid was recorded for an engine that has since exited: another process has the number now
  const liveOwners = groupLeader(); // recorded by an agent-host still running
  t.after(() => [ours, reused, liveOwners].forEach((p) => pidAlive(p) && process.kill(p, 'SIGKILL')));
  const dead = await deadPid();
  mkdirSync(join(home, 'engines'), { recursive: true });
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  writeFileSync(join(home, 'engines', `${dead}.json`), JSON.stringify({ owner: dead, boot, groups: [{ pid: ours, start: processStart(ours) }, { pid: reused, start: processStart(reused)! - 1 }] }));
  writeFileSync(join(home, 'engines', `${process.pid}.json`), JSON.stringify({ owner: process.pid, boot, groups: [{ pid: liveOwners, start: processStart(liveOwners) }] }));
  const stopped = new EngineGroups(env).stopLeftovers();
  assert.deepEqual(stopped, [{ owner: dead, groups: 1 }]);
  await eventually(async () => !pidAlive(ours), 3000);
  assert.equal(pidAlive(reused), true, 'a leader started after the record is someone else\'s group');
  assert.equal(pidAlive(liveOwners), true, 'a running agent-host\'s engines are its own business');
  assert.equal(existsSync(join(home, 'engines', `${dead}.json`)), false);
  assert.equal(existsSync(join(home, 'engines', `${process.pid}.json`)), true);
});

test('a record of another boot stops nothing; a group is recorded while its engine runs and dropped when it ends', { skip: !LINUX && 'process groups are read from /proc' }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'host-orphans-boot-'));
  const env = { AGENT_HOST_HOME: home };
  const leader = groupLeader();
  t.after(() => pidAlive(leader) && process.kill(leader, 'SIGKILL'));
  const dead = await deadPid();
  mkdirSync(join(home, 'engines'), { recursive: true });
  writeFileSync(join(home, 'engines', `${dead}.json`), JSON.stringify({ owner: dead, boot: 'another-boot', groups: [{ pid: leader, start: processStart(leader) }] }));
  const groups = new EngineGroups(env);
  assert.deepEqual(groups.stopLeftovers(), []);
  assert.equal(pidAlive(leader), true);

  groups.add(leader);
  const mine = JSON.parse(readFileSync(join(home, 'engines', `${process.pid}.json`), 'utf8'));
  assert.deepEqual(mine.groups, [{ pid: leader, start: processStart(leader) }]);
  groups.remove(leader);
  assert.equal(existsSync(join(home, 'engines', `${process.pid}.json`)), false, 'no engines, no file');
});
