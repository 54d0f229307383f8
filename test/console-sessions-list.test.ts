// The Sessions page (console/sessions.tsx): none yet said with the way to the market; the sessions
// grouped as the API groups them (今天 Today, 本周 This week, 更早 Earlier) in its order; each row's
// agent, message count, status, the messages waiting and the last message; pages of twenty.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { agentWhenReady, connectFakeHost, pairHost, type FakeHost } from './helpers/host.js';
import { closeConsoleTest, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';
import type { AcceptedRun, Client, SessionView } from '../src/client/index.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let user: { id: string; key: string };
let c: Client;
let host: FakeHost | undefined;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  user = await t.user('lister');
  c = t.client(user.key);
  tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, user.key);
});

after(async () => {
  if (skip) return;
  host?.close();
  await closeConsoleTest(tab, { then: [() => t.close()] });
});

const DAY = 86_400_000;
const LABEL: Record<string, string> = { 今天: 'Today', 本周: 'This week', 更早: 'Earlier' };
const pager = () => tab.page.getByRole('navigation', { name: 'Pages' });

/** Moves a session's last message (and its start) back in time, as the list reads it. */
async function age(id: string, at: number) {
  await t.hub.ctx.em().getConnection().execute(`update sessions set last_msg_at = ?, created_at = ? where id = ?`, [new Date(at), new Date(at), id]);
}

/** The page's groups: each heading's text and its rows' text, in page order. */
async function shownGroups(): Promise<Array<[string, string[]]>> {
  const page = tab.page;
  const groups = page.locator('section > section');
  const out: Array<[string, string[]]> = [];
  for (let i = 0; i < (await groups.count()); i++) {
    const g = groups.nth(i);
    out.push([(await g.locator('h2').innerText()).trim(), (await g.locator('li').allInnerTexts()).map((x) => x.replace(/\s+/g, ' ').trim())]);
  }
  return out;
}

/** The rows the API lists on a page, grouped and written as the page writes them. */
function expectedGroups(items: SessionView[]): Array<[string, string[]]> {
  const out: Array<[string, string[]]> = [];
  for (const s of items) {
    const row = `${s.title} · ${s.agentName} · ${s.messageCount} message${s.messageCount === 1 ? '' : 's'} · ${s.status}${s.pendingRuns > 0 ? ` · ${s.pendingRuns} waiting` : ''}${s.lastMessage ? ` ${s.lastMessage}` : ''}`;
    const last = out[out.length - 1];
    if (last && last[0] === `${s.group} ${LABEL[s.group]}`) last[1].push(row);
    else out.push([`${s.group} ${LABEL[s.group]}`, [row]]);
  }
  return out;
}

test('no sessions yet: said, with a link to the market', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('link', { name: 'Sessions', exact: true }).click();
  await page.getByText("No sessions yet: start one from an agent's page in the market.").waitFor();
  await page.getByRole('main').getByRole('link', { name: 'market' }).click();
  await page.getByRole('heading', { name: 'Market' }).waitFor();
});

test('sessions grouped by day as the API groups them, each row with its facts, in pages of twenty', { skip }, async () => {
  const { page } = tab;
  const { credential } = await pairHost(t, user.key, 'slow-box');
  host = await connectFakeHost(t, credential, { name: 'slow-box', capacity: 1 }); // never ends a run
  const live = await agentWhenReady(c, { name: 'live-bot', scope: 'private', hostId: host.hostId!, engine: 'claude-code' });
  const offline = await seedHost(t, user.id, ['claude-code'], 'away-box');
  const quiet = await agentWhenReady(c, { name: 'quiet-bot', scope: 'private', hostId: offline, engine: 'claude-code' });

  const plain: string[] = [];
  for (let i = 0; i < 19; i++) plain.push(((await c.sessions.create({ agentId: quiet.id })) as SessionView).id);
  // One running its first message with two waiting behind it.
  const { sessionId: busy } = (await c.sessions.create({ agentId: live.id, content: 'refactor the parser' })) as AcceptedRun;
  await host.next((f) => f.t === 'run.start');
  await c.sessions.send(busy, { content: 'then add tests' });
  await c.sessions.send(busy, { content: 'and update the changelog' });
  // One message, waiting for the host's one slot: "1 message", not "1 messages".
  const { sessionId: one } = (await c.sessions.create({ agentId: live.id, content: 'hello, whenever you are free' })) as AcceptedRun;

  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY;
  await age(plain[0], today - 40 * DAY); // earlier: the last, alone on page two
  if (monday < today) await age(plain[1], today - 1); // this week (not on a Monday: then it is earlier)
  const p1 = await c.sessions.list({ page: 1, pageSize: 20 });
  const p2 = await c.sessions.list({ page: 2, pageSize: 20 });
  assert.equal(p1.total, 21);
  assert.deepEqual(p2.items.map((s) => [s.id, s.group]), [[plain[0], '更早']]);
  const b = p1.items.find((s) => s.id === busy)!;
  assert.deepEqual([b.status, b.pendingRuns, b.messageCount > 0, !!b.lastMessage], ['processing', 2, true, true], JSON.stringify(b));
  const o = p1.items.find((s) => s.id === one)!;
  assert.equal(o.messageCount, 1, JSON.stringify(o));

  await page.goto(`${t.url}/sessions`);
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  await page.locator('section > section li').nth(19).waitFor();
  const groups = await shownGroups();
  assert.deepEqual(groups, expectedGroups(p1.items));
  assert.equal(groups[0][0], '今天 Today');
  if (monday < today) assert.equal(groups[1][0], '本周 This week');
  assert.ok(groups.flatMap(([, rows]) => rows).includes(
    `${b.title} · live-bot · ${b.messageCount} messages · processing · 2 waiting ${b.lastMessage}`,
  ));
  assert.ok(groups.flatMap(([, rows]) => rows).includes(`${o.title} · live-bot · 1 message · ${o.status} · 1 waiting ${o.lastMessage}`), JSON.stringify(groups));
  await pager().getByText('Page 1').waitFor();
  assert.ok(await pager().getByRole('button', { name: 'Previous' }).isDisabled());
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2').waitFor();
  await page.getByRole('heading', { name: '更早 Earlier' }).waitFor();
  assert.deepEqual(await shownGroups(), expectedGroups(p2.items));
  assert.ok(await pager().getByRole('button', { name: 'Next' }).isDisabled());
  await pager().getByRole('button', { name: 'Previous' }).click();
  await pager().getByText('Page 1').waitFor();
  await page.getByRole('heading', { name: '今天 Today' }).waitFor();

  // A row opens its session.
  await page.getByRole('link', { name: b.title }).click();
  await page.waitForURL((u) => u.pathname === `/sessions/${encodeURIComponent(busy)}`);
});

test('a page the list no longer reaches (a session deleted elsewhere): the last page that has sessions, not "No sessions yet"', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/sessions`);
  await pager().getByText('Page 1').waitFor();
  // The one session on page two goes in another tab; this page still offers Next.
  const [last] = (await c.sessions.list({ page: 2, pageSize: 20 })).items;
  await c.sessions.remove(last.id);
  const emptyPage = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/sessions' && new URL(r.url()).searchParams.get('page') === '2');
  await pager().getByRole('button', { name: 'Next' }).click();
  assert.deepEqual(((await (await emptyPage).json()).data as { items: unknown[]; total: number }).total, 20);
  // Page two came back empty with 20 sessions in all: the page goes back to page one, whose rows it shows.
  await page.locator('section > section li').nth(19).waitFor();
  assert.equal(await page.locator('section > section li').count(), 20);
  assert.equal(await page.getByText('No sessions yet').count(), 0, 'the account has sessions');
  assert.equal(await pager().count(), 0, 'twenty fit on one page');
});
