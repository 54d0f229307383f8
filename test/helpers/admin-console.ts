// The console's Administration page for the admin tests: a hub of their own, an agent owner with a
// host, the administrator signed in; agents that owner submits for review, and the page's tabs.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './hub.js';
import { seedHost } from './seed.js';
import { closeConsoleTest, openConsole, signInAs, type ConsoleTab } from './browser.js';

export interface AdminConsole {
  t: TestHub;
  tab: ConsoleTab;
  owner: { id: string; key: string };
  hostId: string;
}

export async function openAdminConsole(ownerName: string): Promise<AdminConsole> {
  const t = await startTestHub();
  const owner = await t.user(ownerName);
  const hostId = await seedHost(t, owner.id);
  const tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, t.adminKey);
  return { t, tab, owner, hostId };
}

/**
 * A test file's administration console: opened before its tests, closed after them (the tests provoke
 * failed loads: refusals). Its fields are set once the `before` hook ran.
 */
export function adminConsoleForFile(ownerName: string, skip: string | false): AdminConsole {
  const c = {} as AdminConsole;
  before(async () => {
    if (!skip) Object.assign(c, await openAdminConsole(ownerName));
  });
  after(async () => {
    if (!skip) await closeConsoleTest(c.tab, { failedLoadsProvoked: true, then: [() => c.t.close()] });
  });
  return c;
}

/** A public agent of the owner's, submitted for review; its id. */
export async function submitForReview(c: AdminConsole, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await c.t.api('POST', '/api/v1/agents', { token: c.owner.key, body: { name, scope: 'public', hostId: c.hostId, engine: 'claude-code', step: 'submit', ...extra } });
  assert.equal(r.status, 201, r.text);
  return r.body.data.id;
}

/** The agent as its owner manages it (review status, version, reject reason). */
export const ownersView = async (c: AdminConsole, id: string) => (await c.t.api('GET', `/api/v1/agents/${encodeURIComponent(id)}/manage`, { token: c.owner.key })).body.data;

export async function openAdminTab(c: AdminConsole, name: 'Review queue' | 'Users' | 'Redemptions'): Promise<void> {
  await c.tab.page.goto(`${c.t.url}/admin`);
  await c.tab.page.getByRole('button', { name }).click();
}
