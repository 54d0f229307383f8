// The Hosts page's smaller facts, on fake hosts: "Loading…" before the first list; each status's
// badge tone (online, busy at its capacity, offline) and a host's engines with their versions; the
// pair panel — "Creating a pair key…" with its button held while the hub makes a key, the key's end,
// Copy command, and the new host named by its remark with its status as it changes; a row's actions
// held while the hub works, a refused remark said in its row, and why an offline host's Refresh is off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { CLAUDE_ENGINE, pairHost, pairWithKey, connectFakeHost, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, holdAll, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };
const hosts: FakeHost[] = [];

before(async () => {
  if (skip) return;
  t = await startTestHub();
  u = await t.user('host-details');
  tab = await openConsole(t.url);
  // What the Copy button writes, kept where the test can read it (no clipboard permission needed).
  await tab.page.addInitScript(`Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (text) => { window.copied = text; } } });`);
  await signInAs(tab.page, t.url, u.key);
});

after(async () => {
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => hosts.forEach((h) => h.close()), () => t?.close()] });
});

const hostsPage = () => tab.page.getByRole('main').locator('section').filter({ has: tab.page.getByRole('heading', { name: 'Hosts', level: 1 }) });

test('the first list: "Loading…" until it comes, then its content', { skip }, async () => {
  const { page } = tab;
  const release = await holdNext(page, (url, method) => method === 'GET' && url.pathname === '/api/v1/hosts');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Hosts' }).click();
  await hostsPage().getByText('Loading…').waitFor();
  await release();
  await hostsPage().getByText('No hosts yet').waitFor();
  assert.equal(await hostsPage().getByText('Loading…').count(), 0);
});

test('a status badge per state: online, busy at capacity, offline; its engines listed with their versions', { skip }, async () => {
  const { page } = tab;
  const one = await pairHost(t, u.key, 'one-slot');
  const engines = [{ ...CLAUDE_ENGINE, version: '1.2.3' }, { id: 'codex', displayName: 'Codex' }];
  hosts.push(await connectFakeHost(t, one.credential, { name: 'one-slot', capacity: 1, engines }));
  await pairHost(t, u.key, 'away-box'); // paired, never connected
  const badge = (name: string) => page.getByRole('listitem', { name }).locator('.badge');
  await page.getByRole('listitem', { name: 'one-slot' }).getByText('online', { exact: true }).waitFor();
  assert.equal(await badge('one-slot').getAttribute('class'), 'badge ok');
  assert.match((await page.getByRole('listitem', { name: 'one-slot' }).textContent())!, /EnginesClaude Code 1\.2\.3, CodexLast seen/);
  await page.getByRole('listitem', { name: 'away-box' }).getByText('offline', { exact: true }).waitFor();
  assert.equal(await badge('away-box').getAttribute('class'), 'badge off');
  // One run on its one slot: busy (the fake host never ends it).
  const c = t.client(u.key);
  const agent = await c.agents.create({ name: 'slot-taker', hostId: one.hostId, engine: 'claude-code', workDir: '' });
  await c.sessions.create({ agentId: agent.id, content: 'hold the slot' });
  await page.getByRole('listitem', { name: 'one-slot' }).getByText('busy', { exact: true }).waitFor();
  assert.equal(await badge('one-slot').getAttribute('class'), 'badge warn');
});

test('Pair a host: "Creating a pair key…" held while the hub makes it, the key\'s end, Copy command, the new host named by its remark, with its status as it changes', { skip }, async () => {
  const { page } = tab;
  const release = await holdNext(page, (url, method) => method === 'POST' && url.pathname === '/api/v1/hosts/pair-key');
  await page.getByRole('button', { name: 'Pair a host' }).click();
  const held = page.getByRole('button', { name: 'Creating a pair key…' });
  await held.waitFor();
  assert.ok(await held.isDisabled(), 'a second click would make a second key');
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/hosts/pair-key');
  await release();
  const key = (await (await answered).json()).data as { pairKey: string; expiresAt: number };
  const panel = page.getByRole('region', { name: 'Pair a host' });
  await panel.getByTestId('pair-command').waitFor();
  assert.ok(await page.getByRole('button', { name: 'New pair key' }).isEnabled());
  const until = await page.evaluate((at) => new Date(at).toLocaleTimeString(), key.expiresAt);
  assert.ok((await panel.textContent())!.includes(`the key works once, until ${until}`), `the key's end, as this browser writes the time: ${until}`);

  await panel.getByRole('button', { name: 'Copy command' }).click();
  await panel.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => (window as any).copied), (await panel.getByTestId('pair-command').textContent())!.trim());

  // Paired but not yet connected: the panel says so; a remark given meanwhile names it; connected, online.
  const paired = await pairWithKey(t, key.pairKey, 'fresh-box');
  await panel.getByRole('status').filter({ hasText: 'Paired: fresh-box is offline' }).waitFor();
  const named = await t.api('PATCH', `/api/v1/hosts/${paired.hostId}/remark`, { token: u.key, body: { remark: 'Fresh remark' } });
  assert.ok(named.status < 300, named.text);
  await panel.getByRole('status').filter({ hasText: 'Paired: Fresh remark is offline' }).waitFor();
  hosts.push(await connectFakeHost(t, paired.credential, { name: 'fresh-box' }));
  await panel.getByRole('status').filter({ hasText: 'Paired: Fresh remark is online' }).waitFor();
});

test('a row\'s actions held while the hub works (Refreshing engines…, Saving…, Deleting…), the remark\'s limit, a refused remark said in its row, an offline host\'s Refresh saying why', { skip }, async () => {
  const { page } = tab;
  const box = await pairHost(t, u.key, 'action-box');
  hosts.push(await connectFakeHost(t, box.credential, { name: 'action-box' }));
  const row = page.getByRole('listitem', { name: 'action-box' });
  await row.getByText('online', { exact: true }).waitFor();
  const call = (method: string, tail: string) => (url: URL, m: string) => m === method && url.pathname === `/api/v1/hosts/${box.hostId}${tail}`;

  let release = await holdNext(page, call('POST', '/refresh'));
  await row.getByRole('button', { name: 'Refresh engines' }).click();
  assert.ok(await row.getByRole('button', { name: 'Refreshing engines…' }).isDisabled());
  await release();
  await row.getByRole('button', { name: 'Refresh engines' }).waitFor();

  await row.getByRole('button', { name: 'Add remark' }).click();
  assert.equal(await row.getByLabel('Remark').getAttribute('maxlength'), '200', 'the hub\'s limit, in the field');
  await row.getByLabel('Remark').fill('Held remark');
  release = await holdNext(page, call('PATCH', '/remark'));
  await row.getByRole('button', { name: 'Save remark' }).click();
  assert.ok(await row.getByRole('button', { name: 'Saving…' }).isDisabled());
  await release();
  const named = page.getByRole('listitem', { name: 'Held remark' });
  await named.getByRole('button', { name: 'Edit remark' }).waitFor();

  // Deleted in another tab while this row is being edited: the save is refused in the row. The list's
  // polls are held meanwhile, or the next one would take the row away first.
  await named.getByRole('button', { name: 'Edit remark' }).click();
  await named.getByLabel('Remark').fill('Too late');
  const releaseList = await holdAll(page, (url) => url.pathname === '/api/v1/hosts');
  const other = await pairHost(t, u.key, 'spare-box'); // kept: the page then lists one more host to delete
  const gone = await t.api('DELETE', `/api/v1/hosts/${box.hostId}`, { token: u.key });
  assert.ok(gone.status < 300, gone.text);
  await named.getByRole('button', { name: 'Save remark' }).click();
  assert.match((await named.getByRole('alert').textContent())!, /host not found \(404, code 4040\)/);
  await releaseList();
  await named.waitFor({ state: 'detached' });

  // An offline host's Refresh is not offered, and says why.
  const spare = page.getByRole('listitem', { name: 'spare-box' });
  await spare.getByText('offline', { exact: true }).waitFor();
  const refresh = spare.getByRole('button', { name: 'Refresh engines' });
  assert.ok(await refresh.isDisabled());
  assert.equal(await refresh.getAttribute('title'), 'The host is offline');

  await spare.getByRole('button', { name: 'Delete' }).click();
  release = await holdNext(page, (url, m) => m === 'DELETE' && url.pathname === `/api/v1/hosts/${other.hostId}`);
  await spare.getByRole('button', { name: 'Delete host' }).click();
  assert.ok(await spare.getByRole('button', { name: 'Deleting…' }).isDisabled());
  await release();
  await spare.waitFor({ state: 'detached' });
});
