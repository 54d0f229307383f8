// A guest's run gets, of the owner's user settings, only what takes power away: `permissions.deny`
// and `disableBypassPermissionsMode`. `permissions.ask` takes power away too — Claude Code asks
// before a matching tool runs whatever the mode, and a headless run (`-p`, nobody to answer) does
// not run it; ask comes before allow. Dropped for guests, it leaves them above the owner: with the
// agent's project settings allowing `Bash(git:*)` and the owner's own `ask: ["Bash(git push:*)"]`,
// the owner's runs never push, a stranger's run pushes; an `ask` on `Edit(./deploy/**)` stops the
// owner's accept-edits runs there but not a guest's. The guest's settings must carry the owner's ask
// rules (as ask, or as deny — nobody answers a guest's run's question).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import type { HostToHub } from '../host-protocol/frames.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'audit-guest-ask-'));
mkdirSync(join(root, 'work', 'proj'), { recursive: true });
const claudeDir = join(root, 'claude');
mkdirSync(claudeDir);
const ASK = ['Bash(git push:*)', 'Edit(./deploy/**)', 'WebFetch'];
writeFileSync(join(claudeDir, 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(git:*)'], ask: ASK, deny: ['Read(./.env)'] } }));
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
process.env.AGENT_HOST_GUEST_ENV = 'FAKE_CLAUDE_*';

test("a guest's run is held to the owner's ask rules, as the owner's own runs are", async () => {
  const f: RunStartFrame = { t: 'run.start', runId: 'run_ask', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: 'proj', mode: 'accept-edits', guest: true };
  const frames: HostToHub[] = [];
  const h = startRun(f, { workRoot: join(root, 'work'), claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(root, 'runs'), hostHome: join(root, 'home') }, (x) => frames.push(x));
  await h.done;
  assert.equal((frames.at(-1) as any).ok, true);
  const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { argv: string[]; settings: { permissions?: { ask?: string[]; deny?: string[] } } };
  assert.ok(run.argv.includes('--setting-sources=project,local'), 'the owner\'s user settings are not read by the guest\'s engine');
  const held = [...(run.settings.permissions?.ask ?? []), ...(run.settings.permissions?.deny ?? [])];
  for (const rule of ASK) assert.ok(held.includes(rule), `the owner's ask rule ${rule} does not hold the guest's run (its settings: ${JSON.stringify(run.settings.permissions)})`);
  assert.equal(run.settings.permissions?.deny?.includes('Read(./.env)'), true);
});
