// agent-host warns when its work root is the owner's home or above it, comparing
// the paths as text. A home reached through a link (HOME=/home/u with /home a link to /var/home, as on
// Fedora Atomic; a home moved to another disk and linked back) and a work root by its real path (what
// the default work root, process.cwd(), always is) are the same directory, and nothing is said.
// The guests' rules already name both paths (guest-settings.ts rulePaths); the warning compares neither.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnAgentHost } from './helpers/host.js';

test('agent-host warns when its work root is the home reached through a link', async () => {
  const base = mkdtempSync(join(tmpdir(), 'work-root-home-link-'));
  const real = join(base, 'var-home', 'u');
  mkdirSync(real, { recursive: true });
  symlinkSync(join(base, 'var-home'), join(base, 'home'));
  const home = join(base, 'home', 'u'); // $HOME as the account database says it, through the link
  const host = spawnAgentHost(['run', '--work-root', real], { HOME: home, AGENT_HOST_HOME: join(real, '.agent-host') });
  await host.wait();
  assert.match(host.output(), /work root .* your home directory/, `no warning for a work root that is the home by its real path: ${host.output()}`);
});
