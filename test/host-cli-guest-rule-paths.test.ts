// The owner's deny and ask rules are copied from its user settings (~/.claude/settings.json) into the
// guest run's own settings file elsewhere. In Claude Code's rules a `/path` specifier is relative to the
// settings file that holds it, so a rule `Read(/secrets/**)` meant ~/.claude/secrets/** for the owner and
// something else entirely in the copy: the owner's restriction no longer held the guest. Copied, such a rule
// names its directory absolutely (`//…`); every other form means the same wherever it is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestSettingsOf } from '../src/host-cli/guest-settings.js';

test("an owner's /path rules keep their meaning in a guest's settings file", () => {
  const home = mkdtempSync(join(tmpdir(), 'guest-rule-paths-'));
  const claudeDir = join(home, '.claude');
  mkdirSync(claudeDir);
  writeFileSync(join(claudeDir, 'settings.json'), JSON.stringify({
    permissions: { deny: ['Read(/secrets/**)', 'Edit(//etc/**)', 'Read(~/.env)', 'Read(./local.env)', 'Bash(/usr/bin/curl:*)'], ask: ['Edit(/notes.md)'] },
  }));
  const p = guestSettingsOf(claudeDir).permissions!;
  assert.ok(p.deny!.includes(`Read(/${claudeDir}/secrets/**)`), JSON.stringify(p.deny));
  for (const same of ['Edit(//etc/**)', 'Read(~/.env)', 'Read(./local.env)', 'Bash(/usr/bin/curl:*)']) assert.ok(p.deny!.includes(same), same);
  assert.ok(!p.deny!.includes('Read(/secrets/**)'));
  assert.deepEqual(p.ask, [`Edit(/${claudeDir}/notes.md)`]);
});
