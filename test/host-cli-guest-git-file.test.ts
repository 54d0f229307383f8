// a guest's edits are kept out of the work directory's `.git/` because git runs
// what its config names (`core.fsmonitor`, `core.hooksPath`) at the next git command there, the owner's
// too. The rule is `Edit(<work>/.git/**)`: it covers a `.git` directory's content, not a `.git` that is
// a file — as it is in every `git worktree add` checkout and every submodule (`gitdir: <path>`). A guest
// in accept-edits rewrites `<work>/.git` to `gitdir: ./x`, writes `x/config` with
// `core.fsmonitor = <command>` (x/ is outside every rule), and the owner's next `git status` in the
// agent's directory runs the command with the owner's environment. The `.git` path itself must be read-only too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingsReadOnly } from '../src/host-cli/guest-settings.js';

const root = mkdtempSync(join(tmpdir(), 'guest-git-file-'));
const work = join(root, 'wt');
mkdirSync(work);
writeFileSync(join(work, '.git'), `gitdir: ${join(root, 'main', '.git', 'worktrees', 'wt')}\n`); // a worktree's checkout

test("a guest cannot edit the work directory's .git when it is a file (a worktree or a submodule)", () => {
  const rules = settingsReadOnly(work);
  const git = `/${work}/.git`;
  const covers = rules.filter((r) => r === `Edit(${git})` || r === `Edit(${git}*)` || r === `Edit(${git}{,/**})`);
  assert.ok(covers.length > 0, `no Edit rule names ${git} itself (a file here); the .git rules: ${JSON.stringify(rules.filter((r) => r.includes('.git')))}`);
  const nested = rules.filter((r) => r === `Edit(/${work}/**/.git)` || r === `Edit(/${work}/**/.git*)`);
  assert.ok(nested.length > 0, `no Edit rule names a nested .git file (a submodule's); the .git rules: ${JSON.stringify(rules.filter((r) => r.includes('.git')))}`);
});
