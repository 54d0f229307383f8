// The host-side runner against the fake claude executable: argv, cwd
// confinement, frame normalization, failure, abort (process gone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, confineWorkDir, type RunStartFrame } from '../src/host-cli/runner.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { pidAlive } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'runner-'));
mkdirSync(join(root, 'proj'));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;

const frame = (over: Partial<RunStartFrame> = {}): RunStartFrame => ({
  t: 'run.start', runId: 'run_1', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: 'proj', mode: 'default', ...over,
});
async function run(f: RunStartFrame, opts: { abortAfterMs?: number; abortAtFirstDelta?: boolean; killGraceMs?: number } = {}) {
  const frames: HostToHub[] = [];
  let aborted = false;
  const h = startRun(f, { workRoot: root, claudeBin: FAKE, killGraceMs: opts.killGraceMs }, (x) => {
    frames.push(x);
    // Abort once output has streamed (not after a fixed time: a loaded machine starts the engine late).
    if (opts.abortAtFirstDelta && x.t === 'run.delta' && !aborted) {
      aborted = true;
      h.abort();
    }
  });
  if (opts.abortAfterMs !== undefined) setTimeout(() => h.abort(), opts.abortAfterMs);
  await h.done;
  return frames;
}
const logs = () => readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const alive = pidAlive;

test('a turn: prompt on stdin, stream-json argv, cwd under the work root, normalized frames, one run.end', async () => {
  const frames = await run(frame({ prompt: 'hi [tools] [thinking] [deltas:4]' }));
  const last = logs().at(-1);
  assert.equal(last.prompt, 'hi [tools] [thinking] [deltas:4]');
  assert.deepEqual(last.argv, ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--permission-mode=default']);
  assert.equal(last.cwd, join(root, 'proj'));
  assert.equal(frames[0].t, 'run.init');
  assert.equal((frames[0] as any).model, 'claude-fake-1');
  const deltas = frames.filter((f) => f.t === 'run.delta').map((f: any) => f.text).join('');
  assert.equal(deltas, 'echo: hi [tools] [thinking] [deltas:4]');
  const msgs = frames.filter((f) => f.t === 'run.message') as any[];
  assert.deepEqual(msgs.map((m) => [m.role, m.blocks[0].kind]), [['assistant', 'thinking'], ['assistant', 'tool_use'], ['user', 'tool_result'], ['assistant', 'text']]);
  assert.deepEqual(msgs[1].blocks[0], { kind: 'tool_use', toolName: 'Bash', toolId: 'toolu_1', toolInput: { command: 'ls' } });
  assert.deepEqual(msgs[2].blocks[0], { kind: 'tool_result', toolId: 'toolu_1', toolResult: { content: 'a.txt\nb.txt', isError: false } });
  const ends = frames.filter((f) => f.t === 'run.end') as any[];
  assert.equal(ends.length, 1);
  assert.equal(frames.at(-1), ends[0]);
  assert.equal(ends[0].ok, true);
  assert.deepEqual(ends[0].usage, { inputTokens: 32, outputTokens: 38 }); // the fake reports prompt and answer lengths
  assert.ok(ends[0].engineSessionId);
});

test('resume and permission mode reach the engine argv', async () => {
  const esid = '5d2c0a44-8a51-4d0e-b1f4-0c6a3f9e7b21';
  await run(frame({ resume: esid, mode: 'accept-edits' }));
  assert.deepEqual(logs().at(-1).argv.slice(5), [`--resume=${esid}`, '--permission-mode=acceptEdits']);
  await run(frame({ mode: 'plan' }));
  assert.deepEqual(logs().at(-1).argv.slice(5), ['--permission-mode=plan']);
  await run(frame({ mode: 'auto' }));
  assert.deepEqual(logs().at(-1).argv.slice(5), ['--permission-mode=bypassPermissions']);
});

test('non-zero exit and is_error end with ok:false and an error', async () => {
  const a = (await run(frame({ prompt: '[exit:3]' }))).filter((f) => f.t === 'run.end') as any[];
  assert.equal(a.length, 1);
  assert.equal(a[0].ok, false);
  assert.equal(a[0].error.code, 'ENGINE_FAILED');
  assert.match(a[0].error.message, /code 3/);
  const b = (await run(frame({ prompt: '[is_error]' }))).filter((f) => f.t === 'run.end') as any[];
  assert.equal(b.length, 1);
  assert.equal(b[0].ok, false);
  assert.match(b[0].error.message, /engine reported an error/);
  assert.ok(b[0].usage);
});

test('a missing engine binary ends the run with ENGINE_UNAVAILABLE', async () => {
  const frames: HostToHub[] = [];
  const h = startRun(frame(), { workRoot: root, claudeBin: join(root, 'no-such-claude') }, (x) => frames.push(x));
  await h.done;
  assert.equal(frames.length, 1);
  assert.equal((frames[0] as any).error.code, 'ENGINE_UNAVAILABLE');
});

test('workDir cannot escape the work root', async () => {
  symlinkSync('/', join(root, 'out'));
  assert.equal(confineWorkDir(root, '../x'), undefined);
  assert.equal(confineWorkDir(root, '/etc'), undefined);
  assert.equal(confineWorkDir(root, 'out'), undefined);
  assert.equal(confineWorkDir(root, ''), root);
  assert.equal(confineWorkDir(root, 'proj'), join(root, 'proj'));
  // Paths are relative to the work root and never climb, even where they would land inside it.
  assert.equal(confineWorkDir(root, join(root, 'proj')), undefined);
  assert.equal(confineWorkDir(root, 'proj/../proj'), undefined);
  assert.equal(confineWorkDir(root, 'proj\\..\\proj'), undefined);
  const frames = await run(frame({ workDir: 'a/../../x' }));
  assert.deepEqual(frames.map((f) => f.t), ['run.end']);
  assert.equal((frames[0] as any).error.code, 'BAD_WORKDIR');
  const missing = await run(frame({ workDir: 'not-there' }));
  assert.deepEqual(missing.map((f) => f.t), ['run.end']);
  assert.match((missing[0] as any).error.message, /does not exist/);
});

test('abort: SIGINT stops the engine, one run.end with aborted, process gone', async () => {
  const t0 = Date.now();
  const frames = await run(frame({ prompt: 'long [sleep:30000]' }), { abortAtFirstDelta: true });
  const pid = logs().at(-1).pid;
  assert.ok(Date.now() - t0 < 10_000);
  assert.equal(alive(pid), false);
  const ends = frames.filter((f) => f.t === 'run.end') as any[];
  assert.equal(ends.length, 1);
  assert.equal(ends[0].aborted, true);
  assert.equal(ends[0].ok, false);
  assert.ok(frames.some((f) => f.t === 'run.delta'), 'partial output streamed before the abort');
});

test('abort: an engine that ignores SIGINT is killed after the grace', async () => {
  const frames = await run(frame({ prompt: 'stubborn [ignore-sigint] [sleep:30000]' }), { abortAfterMs: 400, killGraceMs: 300 });
  assert.equal(alive(logs().at(-1).pid), false);
  assert.equal((frames.at(-1) as any).aborted, true);
});
