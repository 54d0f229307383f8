// A guest's turn may make the engine start processes of its own (a tool's command, a hook, a dev
// server started with `&`). They are in the engine's process group. When the engine is aborted the
// whole group is stopped; when it ends by itself (a completed turn, or an engine failure) nothing
// stops the group, and agent-host even drops the group's record — so what a stranger's turn left
// running keeps running on the owner's machine after run.end, after the agent's deletion, after
// agent-host restarts, and each turn adds one: the host's capacity no longer bounds the load.
// A run is over only when nothing it started runs on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { eventually, pidAlive } from './helpers/host.js';

const root = mkdtempSync(join(tmpdir(), 'audit-group-end-'));
mkdirSync(join(root, 'proj'));
const pidFile = join(root, 'left.pid');
// An engine whose turn starts a background command (same process group, stdio detached) and then
// completes normally (or fails: exit code 3 when the prompt says so).
const engine = join(root, 'claude');
writeFileSync(
  engine,
  `#!/bin/sh
prompt=$(cat)
sleep 60 </dev/null >/dev/null 2>&1 &
echo $! > ${JSON.stringify(pidFile)}
echo '{"type":"system","subtype":"init","session_id":"8f1c2a4e-1b2c-4d5e-8f90-123456789abc","model":"m"}'
case "$prompt" in *fail*) echo boom >&2; exit 3;; esac
echo '{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"done"}]},"session_id":"8f1c2a4e-1b2c-4d5e-8f90-123456789abc"}'
echo '{"type":"result","subtype":"success","is_error":false,"session_id":"8f1c2a4e-1b2c-4d5e-8f90-123456789abc","result":"done","usage":{"input_tokens":1,"output_tokens":1}}'
exit 0
`,
);
chmodSync(engine, 0o755);

const frame = (runId: string, prompt: string): RunStartFrame => ({ t: 'run.start', runId, sessionId: 'ses_1', engine: 'claude-code', prompt, workDir: 'proj', mode: 'auto', guest: true });

for (const [name, prompt, ok] of [['completed', 'start a server in the background', true], ['failed', 'start a server, then fail', false]] as const) {
  test(`a ${name} guest run leaves none of its processes running once run.end is sent`, { skip: process.platform === 'win32' }, async (t) => {
    let left: number | undefined;
    t.after(() => void (left && pidAlive(left) && process.kill(left, 'SIGKILL')));
    const frames: HostToHub[] = [];
    let aliveAtEnd: boolean | undefined;
    const h = startRun(frame(`run_${name}`, prompt), { workRoot: root, claudeBin: engine, runFilesDir: join(root, 'runs'), claudeConfigDir: join(root, 'cfg'), hostHome: join(root, 'home'), killGraceMs: 300 }, (f) => {
      if (f.t === 'run.end') {
        left = Number(readFileSync(pidFile, 'utf8'));
        aliveAtEnd = pidAlive(left);
      }
      frames.push(f);
    });
    await h.done;
    const end = frames.at(-1) as Extract<HostToHub, { t: 'run.end' }>;
    assert.equal(end.t, 'run.end');
    assert.equal(end.ok, ok);
    assert.ok(left, 'the engine started its background command');
    // A moment for a SIGKILL sent with the end to land.
    await eventually(async () => !pidAlive(left!) || undefined, 2000, 20).catch(() => {});
    assert.equal(pidAlive(left!), false, `the background command of a ${name} guest run still runs after its run.end (alive at run.end: ${aliveAtEnd})`);
  });
}
