// A guest's deny rules name paths inside `Tool(…)`: Claude Code's rule parser does not take a parenthesis
// inside the specifier reliably (such a rule is skipped as invalid or cut short), so a work directory,
// configuration directory or home named `proj (copy)` gave a guest deny rules that did not hold: its
// edits reached `.git/` and `.claude/` there. The reference host now refuses such a guest's run (the
// owner's own runs are as before) and says why.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import { guestSettingsOf } from '../src/host-cli/guest-settings.js';
import type { HostToHub } from '../host-protocol/frames.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'guest-rule-parens-'));
const work = join(root, 'work');
mkdirSync(join(work, 'proj (copy)'), { recursive: true });
mkdirSync(join(work, 'plain'));
mkdirSync(join(root, 'claude'));
mkdirSync(join(root, 'claude (old)'));
after(() => rmSync(root, { recursive: true, force: true }));

async function run(over: Partial<RunStartFrame>, claudeDir = join(root, 'claude')) {
  const frames: HostToHub[] = [];
  const f: RunStartFrame = { t: 'run.start', runId: 'run_p1', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hi', workDir: 'proj (copy)', mode: 'default', ...over };
  const h = startRun(f, { workRoot: work, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(root, 'runs'), hostHome: join(root, 'host') }, (x) => frames.push(x));
  await h.done;
  return frames.at(-1) as any;
}

test('deny rules for a path holding a parenthesis are not written: the guest settings refuse', () => {
  assert.throws(() => guestSettingsOf(join(root, 'claude'), { workDir: join(work, 'proj (copy)') }), /parenthes/);
  assert.throws(() => guestSettingsOf(join(root, 'claude (old)'), { workDir: join(work, 'plain') }), /parenthes/);
  assert.doesNotThrow(() => guestSettingsOf(join(root, 'claude'), { workDir: join(work, 'plain') }));
});

test("a guest's run in a work directory named with parentheses is refused; the owner's runs there are as before", async () => {
  const end = await run({ guest: true });
  assert.equal(end.t, 'run.end');
  assert.equal(end.ok, false);
  assert.equal(end.error.code, 'BAD_WORKDIR');
  assert.match(end.error.message, /parenthes/);
  const own = await run({ runId: 'run_p2' });
  assert.equal(own.ok, true, JSON.stringify(own));
  const elsewhere = await run({ runId: 'run_p3', guest: true, workDir: 'plain' }, join(root, 'claude (old)'));
  assert.equal(elsewhere.ok, false);
  assert.match(elsewhere.error.message, /parenthes/);
});

test('agent-host says at start that guests are refused under a work root named with a parenthesis', async () => {
  const { spawnAgentHost } = await import('./helpers/host.js');
  const host = spawnAgentHost(['run', '--work-root', join(work, 'proj (copy)')], { HOME: join(root, 'home'), AGENT_HOST_HOME: join(root, 'host') });
  await host.wait();
  assert.match(host.output(), /warning: .*parenthes.*guests' runs .* refused/, host.output());
});
