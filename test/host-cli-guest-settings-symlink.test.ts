// A guest's run gets Edit deny rules on the agent's work directory's `.claude/` (its project settings
// apply to the guest's next turn: hooks or allow rules written there would run commands). The rules
// name the work directory as agent-host joined it (`--work-root` as typed, then the agent's workDir),
// symlinks and all; the engine runs in the directory the kernel gives it, the real path (its cwd,
// against which it resolves `.claude/settings.json`). When the work root — or the agent's work
// directory inside it — is reached through a symlink (a dotfiles or data-disk link, macOS's
// /tmp → /private/tmp), the rules name a path the engine never sees, and a guest allowed to edit
// files edits `<real cwd>/.claude/settings.json` unhindered. The rules must cover the directory the
// engine actually runs in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';
import type { HostToHub } from '../host-protocol/frames.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'audit-guest-link-'));
const realRoot = join(base, 'data', 'work');
mkdirSync(join(realRoot, 'proj'), { recursive: true });
mkdirSync(join(realRoot, 'real-agent'), { recursive: true });
symlinkSync(join(realRoot, 'real-agent'), join(realRoot, 'agent-link')); // a link inside the root, to a directory inside it
const linkedRoot = join(base, 'work'); // the owner's --work-root is a link
symlinkSync(realRoot, linkedRoot);
const claudeDir = join(base, 'claude');
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), '{}');
const logFile = join(base, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
process.env.AGENT_HOST_GUEST_ENV = 'FAKE_CLAUDE_*';

const escape = (p: string) => p.replace(/[\\*?[\]]/g, (c) => '\\' + c);

for (const [name, workRoot, workDir] of [
  ['the work root is a symlink', linkedRoot, 'proj'],
  ["the agent's work directory is a symlink inside the root", realRoot, 'agent-link'],
] as const) {
  test(`a guest's Edit rules on .claude/ cover the directory the engine runs in when ${name}`, async () => {
    const f: RunStartFrame = { t: 'run.start', runId: `run_${workDir}`, sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir, mode: 'accept-edits', guest: true };
    const frames: HostToHub[] = [];
    const h = startRun(f, { workRoot, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(base, 'runs'), hostHome: join(base, 'home') }, (x) => frames.push(x));
    await h.done;
    assert.equal((frames.at(-1) as any).ok, true);
    const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { cwd: string; settings: { permissions: { deny: string[] } } };
    const deny = run.settings.permissions.deny;
    const rule = `Edit(/${escape(run.cwd)}/.claude/**)`;
    assert.ok(deny.includes(rule), `the engine runs in ${run.cwd}; no rule ${rule} among ${JSON.stringify(deny.filter((r) => r.includes('.claude')))}`);
  });
}

// The same for what a guest's file tools must not read: a `~/.claude` kept in a dotfiles repository
// and linked (settings.json there holds the endpoint key, .credentials.json the owner's login) is
// denied under its link's name only; a guest asking for the file by its real path is not matched.
test("a guest's Read rules cover Claude Code's configuration directory and agent-host's home at their real paths", async () => {
  const dots = join(base, 'dotfiles');
  mkdirSync(join(dots, 'claude'), { recursive: true });
  mkdirSync(join(dots, 'agent-host'), { recursive: true });
  writeFileSync(join(dots, 'claude', 'settings.json'), '{}');
  symlinkSync(join(dots, 'claude'), join(base, '.claude'));
  symlinkSync(join(dots, 'agent-host'), join(base, '.agent-host'));
  const f: RunStartFrame = { t: 'run.start', runId: 'run_dots', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: 'proj', mode: 'default', guest: true };
  const h = startRun(f, { workRoot: realRoot, claudeBin: FAKE, claudeConfigDir: join(base, '.claude'), runFilesDir: join(base, 'runs'), hostHome: join(base, '.agent-host') }, () => {});
  await h.done;
  const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { settings: { permissions: { deny: string[] } } };
  const deny = run.settings.permissions.deny;
  for (const real of [join(dots, 'claude'), join(dots, 'agent-host')]) {
    assert.ok(deny.includes(`Read(/${escape(real)}/**)`), `${real} (the real directory) is not denied: ${JSON.stringify(deny)}`);
  }
});
