// each path in a guest's rules is named as given and as the kernel resolves it
// (realpathSync), but a path that does not exist yet keeps only its given form. A home reached through a
// link (HOME=/home/u with /home → /var/home; the engine runs in and names real paths) whose `~/.ssh` does
// not exist yet gets `Edit(//home/u/.ssh/**)` only: a guest allowed to edit files in a work directory
// at the home (the case agent-host now warns of) creates `/var/home/u/.ssh/authorized_keys` by its real
// path, unmatched — a login to the owner's machine. The real path of a missing place is its nearest
// existing ancestor's real path with the rest appended.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestSettingsOf } from '../src/host-cli/guest-settings.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'guest-home-link-')));
const real = join(base, 'var-home', 'u');
mkdirSync(real, { recursive: true });
symlinkSync(join(base, 'var-home'), join(base, 'home'));
const home = join(base, 'home', 'u'); // no .ssh, no .aws, no .netrc yet
const claudeDir = join(real, '.claude');
mkdirSync(claudeDir);
writeFileSync(join(claudeDir, 'settings.json'), '{}');

test("a guest's rules name a home's missing credential places by their real path too", () => {
  const deny = guestSettingsOf(claudeDir, { userHome: home, workDir: home }).permissions?.deny ?? [];
  assert.ok(deny.includes(`Edit(/${home}/.ssh/**)`), 'the given path is named (as today)');
  for (const rule of [`Edit(/${real}/.ssh/**)`, `Read(/${real}/.aws/**)`, `Edit(/${real}/.netrc)`]) {
    assert.ok(deny.includes(rule), `no ${rule}: the rules on the home: ${JSON.stringify(deny.filter((r) => r.includes('/.ssh') || r.includes('/.netrc')))}`);
  }
});
