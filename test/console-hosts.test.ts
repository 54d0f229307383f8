// The Hosts page in a real browser against a real hub and the real agent-host
// CLI: pair with the command the page shows, see the host appear live, set a
// remark, refresh engines (the fake claude's version changes), see it go
// offline, delete it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { makeFakeClaude, spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';
import { noBrowser, openConsole, signInAs, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const tmp = mkdtempSync(join(tmpdir(), 'console-hosts-'));
let t: TestHub;
let user: { id: string; key: string };
let browser: ConsoleTab;
let host: AgentHostProcess | undefined;

/** A claude whose `--version` answers what `version` holds, so a refresh has something to find. */
function versionedClaude(): { bin: string; setVersion(v: string): void } {
  const real = makeFakeClaude(tmp);
  const versionFile = join(tmp, 'claude-version');
  writeFileSync(versionFile, '1.0.0 (Claude Code)\n');
  const bin = join(tmp, 'claude-versioned');
  writeFileSync(bin, `#!/bin/sh\nif [ "$1" = "--version" ]; then cat '${versionFile}'; exit 0; fi\nexec '${real}' "$@"\n`);
  chmodSync(bin, 0o755);
  return { bin, setVersion: (v) => writeFileSync(versionFile, `${v} (Claude Code)\n`) };
}

before(async () => {
  if (skip) return;
  // Plan quotas on: the free plan's one host makes a second pair key a real refusal to show.
  t = await startTestHub({ planQuotas: true });
  user = await t.user('hoster');
  browser = await openConsole(t.url);
  await signInAs(browser.page, t.url, user.key);
});

after(async () => {
  host?.kill('SIGKILL');
  if (browser) {
    // Failed requests the tests provoke log "Failed to load resource"; nothing else may reach the console.
    const thrown = browser.pageErrors.filter((e) => !e.includes('Failed to load resource'));
    await browser.close();
    assert.deepEqual(thrown, [], 'no script errors in the page');
  }
  await t?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('Hosts: pair with the shown command, live status, remark, engines refresh, offline, delete', { skip }, async () => {
  const { page } = browser;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Hosts' }).click();
  await page.getByRole('heading', { name: 'Hosts', level: 1 }).waitFor();
  await page.getByText('No hosts yet').waitFor();
  await shot(page, 'hosts-empty');

  // Pairing: the page shows the exact command; we run it as shown (the real CLI).
  await page.getByRole('button', { name: 'Pair a host' }).click();
  const cmd = (await page.getByTestId('pair-command').textContent())!.trim();
  const shown = cmd.match(/^AGENT_HOST_PAIR_KEY=(ahp_\S+) agent-host run --hub (http:\/\/127\.0\.0\.1:\d+)$/);
  assert.ok(shown, `the key in the environment, out of the process list: ${cmd}`);
  assert.equal(shown[2], t.url, 'the hub the page was loaded from');
  await page.getByText('Waiting for the host to connect').waitFor();
  await shot(page, 'hosts-pairing');

  const claude = versionedClaude();
  const root = join(tmp, 'root');
  mkdirSync(root);
  host = spawnAgentHost([...cmd.split(' ').slice(2), '--work-root', root, '--name', 'console-box', '--capacity', '2'], {
    AGENT_HOST_PAIR_KEY: shown[1],
    AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: claude.bin, CLAUDE_CONFIG_DIR: join(tmp, 'claude-config'),
  });
  await host.waitFor(/connected to/, 60_000); // a cold tsx start on a busy machine is slow
  // Appears without any click: the page polls.
  await page.getByRole('status').filter({ hasText: 'Paired: console-box is online' }).waitFor();
  const row = page.getByRole('listitem', { name: 'console-box' });
  await row.getByText('online', { exact: true }).waitFor();
  assert.match((await row.textContent())!, /Running0 of 2/);
  assert.match((await row.textContent())!, /Claude Code 1\.0\.0/);
  await page.getByRole('button', { name: 'Done' }).click();
  await shot(page, 'hosts-list');

  // An error envelope reads as a sentence with its status and code (the free plan holds one host).
  await page.getByRole('button', { name: 'Pair a host' }).click();
  const refused = page.getByRole('alert');
  await refused.waitFor();
  assert.match((await refused.textContent())!, /host.*\(429, code 4092\)/i);
  await shot(page, 'hosts-quota-error');

  // Remark.
  await row.getByRole('button', { name: 'Add remark' }).click();
  await row.getByLabel('Remark').fill('Build box');
  await row.getByRole('button', { name: 'Save remark' }).click();
  const renamed = page.getByRole('listitem', { name: 'Build box' });
  await renamed.getByRole('heading', { name: 'Build box (console-box)' }).waitFor();
  const listed = await t.api('GET', '/api/v1/hosts', { token: user.key });
  assert.equal(listed.body.data.items[0].remark, 'Build box');

  // Engines refresh: the host re-detects and the page shows the new version.
  claude.setVersion('2.0.0');
  await renamed.getByRole('button', { name: 'Refresh engines' }).click();
  await renamed.getByText('Claude Code 2.0.0').waitFor();
  await shot(page, 'hosts-remark-refreshed');

  // The host stopping shows as offline (live), and refresh is then not offered.
  host.kill('SIGKILL');
  await renamed.getByText('offline', { exact: true }).waitFor();
  assert.ok(await renamed.getByRole('button', { name: 'Refresh engines' }).isDisabled());

  // Delete, with its confirmation; Cancel takes the question back.
  await renamed.getByRole('button', { name: 'Delete' }).click();
  await renamed.getByRole('group', { name: 'Confirm delete' }).getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await renamed.getByRole('button', { name: 'Delete host' }).count(), 0);
  assert.equal((await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.total, 1);
  await renamed.getByRole('button', { name: 'Delete' }).click();
  await renamed.getByRole('button', { name: 'Delete host' }).click();
  await page.getByText('No hosts yet').waitFor();
  await eventually(async () => (await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.total === 0);
});
