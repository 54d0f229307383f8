// the home's credential places a guest's file tools are denied are split into
// directories (denied as `<dir>/**`) and files (denied by their own path). Two of the "directories"
// are files: `~/.vault-token` (the Vault CLI's token, a file) and `~/.config/hub` (the `hub` CLI's
// config, a YAML file holding its GitHub OAuth token). A rule `Read(//home/u/.vault-token/**)` matches
// what lies under such a path (gitignore semantics, which Claude Code's Read/Edit rules follow), never
// the file itself: a stranger's `Read(~/.vault-token)` is not denied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestSettingsOf } from '../src/host-cli/guest-settings.js';

const home = mkdtempSync(join(tmpdir(), 'guest-home-files-'));
writeFileSync(join(home, '.vault-token'), 'hvs.SECRET');
mkdirSync(join(home, '.config'));
writeFileSync(join(home, '.config', 'hub'), 'github.com:\n- user: u\n  oauth_token: ghp_SECRET\n');
const claudeDir = join(home, '.claude');
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), '{}');

for (const file of ['.vault-token', '.config/hub']) {
  test(`a guest is denied ~/${file} itself (a file), not only what lies under it`, () => {
    const deny = guestSettingsOf(claudeDir, { userHome: home }).permissions?.deny ?? [];
    const path = `/${join(home, file)}`;
    for (const tool of ['Read', 'Edit']) {
      const covers = deny.filter((r) => r === `${tool}(${path})` || r === `${tool}(${path}*)`);
      assert.ok(covers.length > 0, `no ${tool} rule names the file ${path} itself; the rules on it: ${JSON.stringify(deny.filter((r) => r.includes(file)))}`);
    }
  });
}
