// agent-host's work root defaults to the directory it is started in, and an agent's work directory
// defaults to the work root: started in the owner's home, every public agent's guests work inside it.
// Their file tools are kept off the credential places the hub knows of, not off the rest of the home;
// agent-host says so at start, and says what to do instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnAgentHost } from './helpers/host.js';

for (const [name, root] of [['is', (home: string) => home], ['holds', (home: string) => dirname(home)]] as const) {
  test(`agent-host warns when its work root ${name} the owner's home`, async () => {
    const home = mkdtempSync(join(tmpdir(), 'work-root-home-'));
    const host = spawnAgentHost(['run', '--work-root', root(home)], { HOME: home, AGENT_HOST_HOME: join(home, '.agent-host') });
    await host.wait();
    assert.match(host.output(), /work root .* your home directory/);
    assert.match(host.output(), /--work-root/);
  });
}

test('agent-host says nothing of it for a work root inside the home', async () => {
  const home = mkdtempSync(join(tmpdir(), 'work-root-home-'));
  const projects = mkdtempSync(join(home, 'projects-'));
  const host = spawnAgentHost(['run', '--work-root', projects], { HOME: home, AGENT_HOST_HOME: join(home, '.agent-host') });
  await host.wait();
  assert.doesNotMatch(host.output(), /your home directory/);
});
