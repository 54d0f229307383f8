// The Hosts page in a real browser against a real hub and the real agent-host
// CLI: pair with the command the page shows, see the host appear live, a run
// in its running count and a model configuration in its row, set, cancel and
// clear a remark, refresh engines (the fake claude's version changes), see it
// go offline with its last-seen time, delete it; and, beside a host already
// paired, the pair panel waiting for the new one, a host that never connected
// (no engines, no CLI version), and a failed refresh and delete shown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { makeFakeClaude, spawnAgentHost, eventually, pairHost, pairWithKey, connectFakeHost, type AgentHostProcess, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, holdAll, noBrowser, openConsole, signInAs, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const tmp = mkdtempSync(join(tmpdir(), 'console-hosts-'));
let t: TestHub;
let user: { id: string; key: string };
let browser: ConsoleTab;
let host: AgentHostProcess | undefined;

/**
 * A claude whose `--version` answers what `version` holds, so a refresh has something to find, and whose
 * runs wait while `hold()`'s gate stands, so a run in progress can be seen.
 */
function versionedClaude(): { bin: string; setVersion(v: string): void; hold(): () => void } {
  const real = makeFakeClaude(tmp);
  const versionFile = join(tmp, 'claude-version');
  const gate = join(tmp, 'claude-gate');
  writeFileSync(versionFile, '1.0.0 (Claude Code)\n');
  const bin = join(tmp, 'claude-versioned');
  writeFileSync(bin, `#!/bin/sh\nif [ "$1" = "--version" ]; then cat '${versionFile}'; exit 0; fi\nwhile [ -f '${gate}' ]; do sleep 0.05; done\nexec '${real}' "$@"\n`);
  chmodSync(bin, 0o755);
  return {
    bin,
    setVersion: (v) => writeFileSync(versionFile, `${v} (Claude Code)\n`),
    hold: () => (writeFileSync(gate, ''), () => rmSync(gate, { force: true })),
  };
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
  await closeConsoleTest(browser, {
    failedLoadsProvoked: true,
    then: [() => t?.close(), () => rmSync(tmp, { recursive: true, force: true })],
  });
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
  await page.getByRole('button', { name: 'New pair key' }).waitFor(); // while one is shown, the button makes another
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
  assert.match((await row.textContent())!, /Last seennow/, 'an online host is seen now');
  assert.match((await row.textContent())!, /Modeldefault/, 'no model configuration applied yet');
  assert.match((await row.textContent())!, /CLI\d+\.\d+\.\d+/, 'the agent-host version it reported');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Pair a host' }).waitFor();

  // A run in progress shows in the row's running count, live, and leaves it when it ends.
  const c = t.client(user.key);
  const hostId = (await row.getAttribute('data-host-id'))!;
  const agent = await c.agents.create({ name: 'runner', hostId, engine: 'claude-code', workDir: '' });
  const release = claude.hold();
  await c.sessions.create({ agentId: agent.id, content: 'take your time' });
  await row.getByTestId('running').filter({ hasText: '1' }).waitFor();
  release();
  await row.getByTestId('running').filter({ hasText: '0' }).waitFor();

  // A model configuration applied to the host is named in its row, with its state.
  const config = await c.modelConfigs.create({ name: 'cfg-one', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-console-0123456789', modelName: 'm1' });
  await c.hosts.applyModelConfig(hostId, config.id);
  await row.getByText(/^cfg-one \(\w+\)$/).waitFor();
  await shot(page, 'hosts-list');

  // An error envelope reads as a sentence with its status and code (the free plan holds one host).
  await page.getByRole('button', { name: 'Pair a host' }).click();
  const refused = page.getByRole('alert');
  await refused.waitFor();
  assert.match((await refused.textContent())!, /host.*\(429, code 4092\)/i);
  await shot(page, 'hosts-quota-error');

  // Remark.
  await row.getByRole('button', { name: 'Add remark' }).click();
  await row.getByText('0/200').waitFor();
  await row.getByLabel('Remark').fill('  Build box ');
  await row.getByText('12/200').waitFor(); // counted as typed: the limit is the field's
  await row.getByRole('button', { name: 'Save remark' }).click();
  const renamed = page.getByRole('listitem', { name: 'Build box' });
  await renamed.getByRole('heading', { name: 'Build box (console-box)' }).waitFor();
  const listed = await t.api('GET', '/api/v1/hosts', { token: user.key });
  assert.equal(listed.body.data.items[0].remark, 'Build box');
  // Editing starts from the remark; Cancel keeps it.
  await renamed.getByRole('button', { name: 'Edit remark' }).click();
  assert.equal(await renamed.getByLabel('Remark').inputValue(), 'Build box');
  await renamed.getByLabel('Remark').fill('Something else');
  await renamed.getByRole('button', { name: 'Cancel' }).click();
  await renamed.getByRole('button', { name: 'Edit remark' }).waitFor();
  assert.equal((await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.items[0].remark, 'Build box');

  // Engines refresh: the host re-detects and the page shows the new version.
  claude.setVersion('2.0.0');
  await renamed.getByRole('button', { name: 'Refresh engines' }).click();
  await renamed.getByText('Claude Code 2.0.0').waitFor();
  await shot(page, 'hosts-remark-refreshed');

  // The host stopping shows as offline (live), and refresh is then not offered.
  host.kill('SIGKILL');
  await renamed.getByText('offline', { exact: true }).waitFor();
  assert.ok(await renamed.getByRole('button', { name: 'Refresh engines' }).isDisabled());
  assert.match((await renamed.textContent())!, /Last seen\d+ s ago/, 'an offline host shows when it was last seen');

  // A cleared remark gives the host its own name back.
  await renamed.getByRole('button', { name: 'Edit remark' }).click();
  await renamed.getByLabel('Remark').fill('  ');
  await renamed.getByRole('button', { name: 'Save remark' }).click();
  await page.getByRole('listitem', { name: 'console-box' }).getByRole('heading', { name: 'console-box', exact: true }).waitFor();
  assert.equal((await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.items[0].remark, null);

  const plain = page.getByRole('listitem', { name: 'console-box' });
  // Delete, with its confirmation; Cancel takes the question back.
  await plain.getByRole('button', { name: 'Delete' }).click();
  await plain.getByRole('group', { name: 'Confirm delete' }).getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await plain.getByRole('button', { name: 'Delete host' }).count(), 0);
  assert.equal((await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.total, 1);
  await plain.getByRole('button', { name: 'Delete' }).click();
  await plain.getByRole('button', { name: 'Delete host' }).click();
  await page.getByText('No hosts yet').waitFor();
  await eventually(async () => (await t.api('GET', '/api/v1/hosts', { token: user.key })).body.data.total === 0);
});

test('Hosts: with a host already paired, the pair panel waits for the new one', { skip }, async () => {
  // A hub without plan quotas: an account may hold a second host while it pairs one.
  const t2 = await startTestHub();
  const tab = await openConsole(t2.url);
  const hosts: FakeHost[] = [];
  try {
    const u = await t2.user('two-hosts');
    const old = await pairHost(t2, u.key, 'old-box');
    // It answers an engines refresh with a list that is not one: the hub refuses the reply.
    const badRefresh = (f: { t: string; id: number }) => (f.t === 'engines.refresh' ? { t: 'reply' as const, id: f.id, ok: true, data: { engines: 'none' } } : undefined);
    hosts.push(await connectFakeHost(t2, old.credential, { name: 'old-box', answer: badRefresh }));
    const never = await pairHost(t2, u.key, 'never-box'); // paired, never connected: nothing reported yet
    const { page } = tab;
    await signInAs(page, t2.url, u.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Hosts' }).click();
    await page.getByRole('listitem', { name: 'old-box' }).getByText('online', { exact: true }).waitFor();
    assert.match((await page.getByRole('listitem', { name: 'old-box' }).textContent())!, /CLIfake-0\.0\.1/, 'the CLI version its hello gave');
    const neverRow = page.getByRole('listitem', { name: 'never-box' });
    await neverRow.getByText('offline', { exact: true }).waitFor();
    assert.match((await neverRow.textContent())!, /Enginesnone reported/);
    assert.match((await neverRow.textContent())!, /CLI—/);
    assert.match((await neverRow.textContent())!, /Last seen—/, 'never seen');
    await page.getByRole('button', { name: 'Pair a host' }).click();
    const cmd = (await page.getByTestId('pair-command').textContent())!.trim();
    const pairKey = /AGENT_HOST_PAIR_KEY=(\S+)/.exec(cmd)![1];
    // A poll of the list after the key was made still lists only the host that was there before.
    await page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === '/api/v1/hosts');
    await page.getByText('Waiting for the host to connect').waitFor();
    assert.equal(await page.getByRole('status').filter({ hasText: 'Paired' }).count(), 0, 'the host that was already there is not the one being paired');
    // The new machine pairs with the shown key (the host CLI's call) and connects.
    const { credential } = await pairWithKey(t2, pairKey, 'new-box');
    hosts.push(await connectFakeHost(t2, credential, { name: 'new-box' }));
    await page.getByRole('status').filter({ hasText: 'Paired: new-box is online' }).waitFor();
    // A refresh that fails says so in the host's row.
    const oldRow = page.getByRole('listitem', { name: 'old-box' });
    await oldRow.getByRole('button', { name: 'Refresh engines' }).click();
    assert.match((await oldRow.getByRole('alert').textContent())!, /\(\d{3}, code \d+\)/);
    // A host deleted elsewhere (another tab) while this page still lists it: the refusal is said in its row.
    // The list's polls are held meanwhile, or the next one would take the row away first.
    const releaseList = await holdAll(page, (url) => url.pathname === '/api/v1/hosts');
    const gone = await t2.api('DELETE', `/api/v1/hosts/${never.hostId}`, { token: u.key });
    assert.ok(gone.status < 300, gone.text);
    await neverRow.getByRole('button', { name: 'Delete' }).click();
    await neverRow.getByRole('button', { name: 'Delete host' }).click();
    assert.match((await neverRow.getByRole('alert').textContent())!, /host not found \(404, code 4040\)/);
    await releaseList();
    await neverRow.waitFor({ state: 'detached' });
    assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('Failed to load resource')), [], 'no script errors in the page');
  } finally {
    for (const h of hosts) h.close();
    await tab.close();
    await t2.close();
  }
});
