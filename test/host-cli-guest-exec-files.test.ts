// A guest allowed to edit files (accept-edits) is kept out of the work directory's `.claude/`,
// because what is written there makes commands run (project hooks, allow rules). Other files in
// the work directory do the same, and a guest may write them:
//   .git/config  `core.fsmonitor = <command>` (or `core.hooksPath`, a `.git/hooks/*` script): git
//                runs it on the next `git status` in that directory — the engine's own git calls,
//                the owner's next run, the owner at their terminal — with the owner's environment;
//   .mcp.json    a project MCP server is a command; guests' runs ignore it (--strict-mcp-config),
//                the owner's own runs in the agent's directory start it once the project's servers
//                are enabled (`enableAllProjectMcpServers`, or a server name the owner approved and
//                the guest now points at another command).
// So edit rights become command execution outside the mode the owner allowed. The guest's settings
// must keep its edits out of them as they do for `.claude/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'audit-guest-exec-'));
const work = join(root, 'work');
mkdirSync(join(work, 'proj', '.git'), { recursive: true });
const claudeDir = join(root, 'claude');
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), '{}');
const logFile = join(root, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
process.env.AGENT_HOST_GUEST_ENV = 'FAKE_CLAUDE_*';

test("a guest allowed to edit files cannot edit the work directory's .git/ or .mcp.json", async () => {
  const f: RunStartFrame = { t: 'run.start', runId: 'run_exec', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: 'proj', mode: 'accept-edits', guest: true };
  const h = startRun(f, { workRoot: work, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(root, 'runs'), hostHome: join(root, 'home') }, () => {});
  await h.done;
  const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { settings: { permissions: { deny: string[] } } };
  const deny = run.settings.permissions.deny;
  const dir = join(work, 'proj');
  assert.ok(deny.includes(`Edit(/${dir}/.claude/**)`), 'the .claude/ rule is there (as today)');
  for (const rule of [`Edit(/${dir}/.git/**)`, `Edit(/${dir}/.mcp.json)`]) {
    assert.ok(deny.includes(rule), `no ${rule} among the guest's rules: ${JSON.stringify(deny.filter((r) => r.startsWith('Edit')))}`);
  }
});
