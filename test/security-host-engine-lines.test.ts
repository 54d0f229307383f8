// An engine's line is read whole before it is parsed, and what an engine prints is steered by
// whoever wrote the prompt. A line without end must not grow agent-host's memory on the owner's
// machine without bound: past the line limit the run ends ENGINE_FAILED and the engine is stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { readEngineLines } from '../src/host-cli/engine-lines.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { pidAlive } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'host-lines-'));
mkdirSync(join(root, 'proj'));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
const lastPid = (): number => JSON.parse(readFileSync(logFile, 'utf8').trim().split('\n').at(-1)!).pid;

const frame = (prompt: string): RunStartFrame => ({ t: 'run.start', runId: 'run_1', sessionId: 'ses_1', engine: 'claude-code', prompt, workDir: 'proj', mode: 'default' });

test('a line past the limit with no newline ends the run ENGINE_FAILED, and the engine is stopped', async () => {
  const frames: HostToHub[] = [];
  const t0 = Date.now();
  const h = startRun(frame('[endless-line:3000000]'), { workRoot: root, claudeBin: FAKE, lineMaxBytes: 1024 * 1024, killGraceMs: 500 }, (f) => frames.push(f));
  await h.done;
  const ends = frames.filter((f) => f.t === 'run.end') as Array<HostToHub & { t: 'run.end' }>;
  assert.equal(ends.length, 1);
  assert.equal(ends[0].ok, false);
  assert.equal(ends[0].error?.code, 'ENGINE_FAILED');
  assert.match(ends[0].error!.message, /line .* over 1048576 bytes/);
  assert.ok(Date.now() - t0 < 25_000, 'ended by the bound, not by the engine\'s 30-s wait');
  assert.equal(pidAlive(lastPid()), false, 'the engine is gone');
});

test('lines under the limit pass whole: split across chunks, \\r\\n ended, multi-byte characters cut between chunks, a last line without newline', async () => {
  const input = new PassThrough();
  const lines: string[] = [];
  const over: number[] = [];
  readEngineLines(input, { line: (l) => lines.push(l), tooLong: (n) => over.push(n) }, 16);
  const euro = Buffer.from('€'); // 3 bytes
  input.write(Buffer.from('ab'));
  input.write(Buffer.from('c\r\nd'));
  input.write(euro.subarray(0, 1));
  input.write(Buffer.concat([euro.subarray(1), Buffer.from('\n\n0123456789abcdef\nlast')]));
  input.end();
  await once(input, 'end');
  assert.deepEqual(lines, ['abc', 'd€', '', '0123456789abcdef', 'last']);
  assert.deepEqual(over, []);
});

test('the limit counts a line\'s bytes over every chunk; nothing after it is delivered', async () => {
  const input = new PassThrough();
  const lines: string[] = [];
  const over: number[] = [];
  readEngineLines(input, { line: (l) => lines.push(l), tooLong: (n) => over.push(n) }, 16);
  input.write(Buffer.from('ok\n0123456789'));
  input.write(Buffer.from('0123456789'));
  input.write(Buffer.from('\nnext\n'));
  input.end();
  await once(input, 'end');
  assert.deepEqual(lines, ['ok']);
  assert.deepEqual(over, [20]);
});
