// An engine stopped by an abort prints no `result` line, the only place the host CLI read usage
// from: a turn aborted after its answer streamed ended with no usage, so it was never charged (every
// abort a free run). Claude Code's assistant lines carry their API message's usage; the CLI sums it
// per message (a message's lines repeat it) and reports that when no result line came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRun } from '../src/host-cli/runner.js';
import { ClaudeStream } from '../src/host-cli/claude-stream.js';
import type { HostToHub } from '../host-protocol/frames.js';

test('an aborted turn reports the usage its assistant messages reported (no result line after SIGINT)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'abort-usage-'));
  mkdirSync(join(dir, 'proj'));
  const bin = join(dir, 'claude');
  writeFileSync(bin, `#!/usr/bin/env node
process.stdin.resume(); process.stdin.on('end', () => {
  const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  out({ type: 'system', subtype: 'init', session_id: '3f1c1e8e-7c53-4a8e-9c39-2f4f9b0e8d11', model: 'claude-x' });
  out({ type: 'assistant', message: { id: 'msg_1', model: 'claude-x', content: [{ type: 'text', text: 'the whole valuable answer' }], usage: { input_tokens: 20000, output_tokens: 4000 } } });
  setTimeout(() => {}, 30000);
});
`);
  chmodSync(bin, 0o755);
  const frames: HostToHub[] = [];
  const h = startRun({ t: 'run.start', runId: 'run_a', sessionId: 'ses_a', engine: 'claude-code', prompt: 'go', workDir: 'proj', mode: 'default' },
    { workRoot: dir, claudeBin: bin, killGraceMs: 300 }, (f) => {
      frames.push(f);
      if (f.t === 'run.message') h.abort(); // the answer came; then the abort
    });
  await h.done;
  const end = frames.find((f) => f.t === 'run.end') as Extract<HostToHub, { t: 'run.end' }>;
  assert.ok(frames.some((f) => f.t === 'run.message'), 'the answer was streamed');
  assert.equal(end.aborted, true);
  assert.deepEqual(end.usage, { inputTokens: 20000, outputTokens: 4000 });
});

test('usage per message: repeated lines of one message count once (the largest), messages add up, the result line wins', () => {
  const p = new ClaudeStream('run_x');
  assert.equal(p.usage(), undefined, 'nothing reported yet');
  const line = (id: string | undefined, input: number, output: number, cached = 0) =>
    p.event({ type: 'assistant', message: { id, content: [{ type: 'text', text: 'x' }], usage: { input_tokens: input, cache_read_input_tokens: cached, output_tokens: output } } });
  line('msg_1', 100, 5, 900); // one message, two content blocks: its usage twice, output grown
  line('msg_1', 100, 12, 900);
  line('msg_2', 50, 7);
  line(undefined, 1, 1); // no id: counted on its own
  assert.deepEqual(p.usage(), { inputTokens: 1000 + 50 + 1, outputTokens: 12 + 7 + 1 });
  p.event({ type: 'result', subtype: 'success', usage: { input_tokens: 2000, output_tokens: 30 } });
  assert.deepEqual(p.usage(), { inputTokens: 2000, outputTokens: 30 }, "the result line's total is the turn's");
});
