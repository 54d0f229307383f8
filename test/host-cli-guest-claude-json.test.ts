// Review (forty-sixth session): a guest's run denies its file tools agent-host's home and Claude Code's configuration
// directory (default ~/.claude), but Claude Code's global config file lives beside that directory,
// at ~/.claude.json (when CLAUDE_CONFIG_DIR is unset): the owner's user-scoped MCP servers (with their
// env secrets), account details and, for an API-key login, its key. A guest's Read tool reaches it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { guestSettings, guestSettingsOf } from '../src/host-cli/guest-settings.js';

test("a guest's file tools are kept out of the owner's ~/.claude.json (default config dir)", () => {
  const home = mkdtempSync(join(tmpdir(), 'r46-home-'));
  const configDir = join(home, '.claude'); // claudeConfigDirOf() without CLAUDE_CONFIG_DIR
  const s = guestSettingsOf(configDir, { privateDirs: [join(home, '.agent-host')], workDir: join(home, 'work') });
  const deny = s.permissions?.deny ?? [];
  const covered = deny.some((r) => r.startsWith('Read(') && (r.includes(`/${home}/.claude.json`) || r === `Read(/${home}/**)`));
  assert.ok(covered, `no Read rule covers ${home}/.claude.json; deny = ${JSON.stringify(deny)}`);
});

test('two runs whose ids differ only in characters a file name cannot hold get settings files of their own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'guest-run-files-'));
  const a = guestSettings('run/a', dir, join(dir, 'runs'));
  const b = guestSettings('run_a', dir, join(dir, 'runs'));
  const fileOf = (g: { args: string[] }) => g.args.find((x) => x.startsWith('--settings='));
  assert.notEqual(fileOf(a), fileOf(b), 'one run\'s end would delete the other\'s file');
  a.remove();
  b.remove();
});
