// A guest's file tools may read what the work directory holds and, in the modes that allow it, paths
// outside it. The owner's home holds credentials any engine could read: SSH keys, cloud and cluster
// credentials, registry and git tokens. An agent whose work directory is the home itself (agent-host
// started there, the default work root being the current directory) put them one `Read` away from a
// stranger. A guest's settings deny its file tools the well-known credential places of the owner's
// home, wherever its work directory is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, type RunStartFrame } from '../src/host-cli/runner.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'guest-home-secrets-'));
mkdirSync(join(home, '.ssh'));
writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
writeFileSync(join(home, '.netrc'), 'machine example.com password hunter2');
const claudeDir = join(home, '.claude');
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), '{}');
const logFile = join(home, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
process.env.AGENT_HOST_GUEST_ENV = 'FAKE_CLAUDE_*';

test("a guest's run whose work directory is the owner's home is denied the home's credentials", async () => {
  const f: RunStartFrame = { t: 'run.start', runId: 'run_home', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: '', mode: 'default', guest: true };
  const h = startRun(f, { workRoot: home, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(home, 'runs'), hostHome: join(home, '.agent-host'), userHome: home }, () => {});
  await h.done;
  const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { settings: { permissions: { deny: string[] } } };
  const deny = run.settings.permissions.deny;
  for (const rule of [`Read(/${home}/.ssh/**)`, `Edit(/${home}/.ssh/**)`, `Read(/${home}/.aws/**)`, `Read(/${home}/.netrc)`, `Read(/${home}/.git-credentials)`, `Read(/${home}/.config/gh/**)`]) {
    assert.ok(deny.includes(rule), `no ${rule} among the guest's rules: ${JSON.stringify(deny)}`);
  }
});

test("the owner's own run gets no settings file: its engine reads as the owner's does", async () => {
  const f: RunStartFrame = { t: 'run.start', runId: 'run_owner', sessionId: 'ses_1', engine: 'claude-code', prompt: 'hello', workDir: '', mode: 'default' };
  const h = startRun(f, { workRoot: home, claudeBin: FAKE, claudeConfigDir: claudeDir, runFilesDir: join(home, 'runs'), hostHome: join(home, '.agent-host'), userHome: home }, () => {});
  await h.done;
  const run = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1) as { argv: string[] };
  assert.ok(!run.argv.some((x) => x.startsWith('--settings')));
});
