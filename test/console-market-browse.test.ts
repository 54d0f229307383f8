// The market page beyond the first look (console-market.test.ts): featured agents, each card's facts,
// the category filter, the four sorts, the tag facets and the pages — a filter, a search or a sort
// always back to page one; no Featured section when none is; one agent's facts, a favorite toggled
// both ways with its count (a failed try said, then cleared), an agent gone between opening its page
// and acting on it, and a session's start held while the hub creates it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { seedHost } from './helpers/seed.js';
import { eventually } from './helpers/host.js';
import { closeConsoleTest, holdNext, noBrowser, openConsole, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let viewer: { id: string; key: string };
let hostId: string;
const ids: Record<string, string> = {};
const FILLERS = 9;

async function publish(name: string, body: object = {}) {
  const c = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name, scope: 'public', step: 'submit', hostId, engine: 'claude-code', ...body } });
  assert.equal(c.status, 201, c.text);
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(c.body.data.id)}/approve`, { token: t.adminKey })).status, 200);
  ids[name] = c.body.data.id;
}

before(async () => {
  if (skip) return;
  t = await startTestHub();
  owner = await t.user('browse-owner');
  viewer = await t.user('browse-viewer');
  const fans = [await t.user('fan-one'), await t.user('fan-two')];
  hostId = await seedHost(t, owner.id);
  await publish('alpha', { desc: 'Alpha helper', cat: 'coding', tags: ['python', 'cli'] });
  await publish('bravo', { cat: 'writing', tags: ['blog'], pay: 'paid', expectedInput: 'a topic', expectedOutput: 'a blog post' });
  await publish('charlie', { desc: 'Charts from tables', cat: 'data' });
  // Each filler with two tags of its own: more tags than the twenty the page offers.
  for (let i = 1; i <= FILLERS; i++) await publish(`filler-${String(i).padStart(2, '0')}`, { desc: `Filler ${i}`, tags: ['filler', `topic-${i}a`, `topic-${i}b`] });
  await new Promise((r) => setTimeout(r, 20)); // the newest by a clear margin
  await publish('newest', { displayName: 'The Newest One', desc: 'Approved last', tags: ['filler'] });
  // alpha: two users (2 uses, 2 sessions); bravo: one user three times (1 use, 3 sessions); charlie: two favorites.
  for (const f of fans) await t.client(f.key).sessions.create({ agentId: ids.alpha });
  for (let i = 0; i < 3; i++) await t.client(fans[0].key).sessions.create({ agentId: ids.bravo });
  for (const f of fans) await t.client(f.key).market.favorite(ids.charlie, true);
  await eventually(async () => {
    const b = (await t.client().market.get(ids.bravo));
    const c = (await t.client().market.get(ids.charlie));
    return b.sessionCount === 3 && c.favoriteCount === 2;
  });
  tab = await openConsole(t.url);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close()] });
});

const results = () => tab.page.getByRole('list', { name: 'Agents' });
const cards = () => results().locator('li.card');
const card = (name: string) => cards().filter({ has: tab.page.getByRole('link', { name, exact: true }) });
const names = async (list = results()) => list.locator('li.card h3').allTextContents();
const pager = () => tab.page.getByRole('navigation', { name: 'Pages' });

/** The page's list once it shows `first` first (answers come after a click). */
async function firstIs(first: string) {
  await results().locator('li.card h3').first().filter({ hasText: new RegExp(`^${first}$`) }).waitFor();
}

test('featured: the most used agents first, at most eight', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('heading', { name: 'Featured' }).waitFor();
  const featured = page.locator('section[aria-labelledby="featured"] li.card h3');
  await featured.first().waitFor();
  const shown = await featured.allTextContents();
  assert.equal(shown.length, 8, shown.join(', '));
  assert.deepEqual(shown.slice(0, 3), ['alpha', 'bravo', 'charlie']);
});

test("a card's facts: category, tags, pricing, uses and favorites; no description said", { skip }, async () => {
  await card('alpha').waitFor();
  const meta = async (name: string) => (await card(name).locator('p.meta').innerText()).replace(/\s+/g, ' ').trim();
  assert.equal(await meta('alpha'), 'coding #python #cli free · 2 uses · ★ 0');
  assert.equal(await meta('bravo'), 'writing #blog paid · 1 use · ★ 0');
  assert.equal(await meta('charlie'), 'data free · 0 uses · ★ 2');
  assert.equal(await card('alpha').locator('p').first().innerText(), 'Alpha helper');
  assert.equal(await card('bravo').locator('p').first().innerText(), 'No description.');
});

test('pages of twelve: Next and Previous, the count of pages, each end disabled', { skip }, async () => {
  assert.equal(await cards().count(), 12);
  await pager().getByText('Page 1 of 2').waitFor();
  assert.ok(await pager().getByRole('button', { name: 'Previous' }).isDisabled());
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2 of 2').waitFor();
  assert.equal(await cards().count(), 3 + FILLERS + 1 - 12);
  assert.ok(await pager().getByRole('button', { name: 'Next' }).isDisabled());
  await pager().getByRole('button', { name: 'Previous' }).click();
  await pager().getByText('Page 1 of 2').waitFor();
  assert.equal(await cards().count(), 12);
});

test('the four sorts, each back to page one', { skip }, async () => {
  const { page } = tab;
  const sort = page.getByLabel('Sort');
  await firstIs('alpha'); // most used: two users
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2 of 2').waitFor();
  await sort.selectOption({ label: 'Most sessions' });
  await pager().getByText('Page 1 of 2').waitFor();
  await firstIs('bravo');
  assert.deepEqual((await names()).slice(0, 2), ['bravo', 'alpha']);
  await sort.selectOption({ label: 'Most favorited' });
  await firstIs('charlie');
  assert.deepEqual((await names()).slice(0, 3), ['charlie', 'alpha', 'bravo']);
  await sort.selectOption({ label: 'Recently updated' });
  await firstIs('The Newest One'); // named by its display name
  await sort.selectOption({ label: 'Most used' });
  await firstIs('alpha');
  assert.deepEqual((await names()).slice(0, 3), ['alpha', 'bravo', 'charlie']);
});

test('a category narrows the list and goes back to page one; All lists every agent again', { skip }, async () => {
  const { page } = tab;
  const cat = page.getByLabel('Category');
  assert.deepEqual(
    (await cat.locator('option').allTextContents()).sort(),
    ['All', 'Coding (1)', 'Data (1)', 'Other (10)', 'Writing (1)'],
  );
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2 of 2').waitFor();
  await cat.selectOption({ label: 'Writing (1)' });
  await pager().getByText('Page 1 of 1').waitFor();
  assert.deepEqual(await names(), ['bravo']);
  await cat.selectOption({ label: 'All' });
  await pager().getByText('Page 1 of 2').waitFor();
  assert.equal(await cards().count(), 12);
});

test('a search (sent trimmed) from page two shows page one, nothing found no pages; the first twenty tag facets, the one picked pressed', { skip }, async () => {
  const { page } = tab;
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2 of 2').waitFor();
  await page.getByLabel('Search').fill('  charts  ');
  const asked = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/v1/agents' && new URL(r.url()).searchParams.has('q'));
  await page.getByRole('button', { name: 'Search' }).click();
  assert.equal(new URL((await asked).url()).searchParams.get('q'), 'charts', 'the search sent without its spaces');
  await pager().getByText('Page 1 of 1').waitFor();
  assert.deepEqual(await names(), ['charlie']);
  // Nothing found: said, and no pages to turn.
  await page.getByLabel('Search').fill('no-such-agent');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No agents match.').waitFor();
  assert.equal(await pager().count(), 0);
  await page.getByLabel('Search').fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  await pager().getByText('Page 1 of 2').waitFor();
  const tags = page.getByLabel('Tags');
  const facets = (await t.client().market.facets()).tags;
  assert.equal(facets.length, 4 + 2 * FILLERS);
  assert.deepEqual(await tags.getByRole('button').allTextContents(), facets.slice(0, 20).map((x) => `#${x.key} (${x.count})`), 'the first twenty, as the hub orders them');
  assert.equal(facets[0].key, 'filler');
  const blog = tags.getByRole('button', { name: '#blog (1)' });
  assert.ok(facets.slice(0, 20).some((x) => x.key === 'blog'), 'blog is among those offered');
  // A tag from page two: page one of its agents.
  await pager().getByRole('button', { name: 'Next' }).click();
  await pager().getByText('Page 2 of 2').waitFor();
  await blog.click();
  await pager().getByText('Page 1 of 1').waitFor();
  assert.deepEqual(await names(), ['bravo']);
  assert.deepEqual(await tags.locator('button[aria-pressed="true"]').allTextContents(), ['#blog (1)'], 'the tag picked, and only it, pressed');
  await blog.click();
  await pager().getByText('Page 1 of 2').waitFor();
  assert.equal(await tags.locator('button[aria-pressed="true"]').count(), 0);
});

test("an agent's page: every fact, a dash for what it lacks", { skip }, async () => {
  const { page } = tab;
  const fact = async (name: string) => (await page.locator('dl.facts dt', { hasText: name }).locator('+ dd').innerText()).trim();
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.bravo)}`);
  await page.getByRole('heading', { name: 'bravo' }).waitFor();
  assert.deepEqual(
    [await fact('Owner'), await fact('Category'), await fact('Tags'), await fact('Engine'), await fact('Pricing'),
      await fact('Expected input'), await fact('Expected output'), await fact('Uses / sessions / favorites')],
    ['browse-owner', 'writing', 'blog', 'claude-code', 'paid', 'a topic', 'a blog post', '1 / 3 / 0'],
  );
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.alpha)}`);
  await page.getByRole('heading', { name: 'alpha' }).waitFor();
  assert.deepEqual(
    [await fact('Tags'), await fact('Expected input'), await fact('Expected output'), await fact('Uses / sessions / favorites')],
    ['python, cli', '—', '—', '2 / 2 / 0'],
  );
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.charlie)}`);
  await page.getByRole('heading', { name: 'charlie' }).waitFor();
  assert.equal(await fact('Tags'), '—');
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.newest)}`);
  await page.getByRole('heading', { name: 'The Newest One', level: 1 }).waitFor(); // its display name
});

test('no featured agents: no Featured section, the list as ever', { skip }, async () => {
  const { page } = tab;
  await page.route('**/api/v1/agents/featured', async (route) => {
    const answer = await route.fetch();
    await route.fulfill({ response: answer, json: { ...(await answer.json()), data: [] } });
  });
  try {
    await page.goto(t.url);
    await firstIs('alpha');
    assert.equal(await page.getByRole('heading', { name: 'Featured' }).count(), 0);
  } finally {
    await page.unroute('**/api/v1/agents/featured');
  }
});

test('a favorite toggled on and off again, its count following', { skip }, async () => {
  const { page } = tab;
  await signInAs(page, t.url, viewer.key);
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.charlie)}`);
  const counts = page.locator('dl.facts dt', { hasText: 'Uses / sessions / favorites' }).locator('+ dd');
  // A first try that does not reach the hub reads as a message, which the next try clears.
  await page.route('**/favorite', (route) => route.abort(), { times: 1 });
  await page.getByRole('button', { name: '☆ Favorite' }).click();
  await page.getByRole('alert').waitFor();
  assert.equal(await page.getByRole('button', { name: '☆ Favorite' }).getAttribute('aria-pressed'), 'false');
  await page.getByRole('button', { name: '☆ Favorite' }).click();
  await page.getByRole('button', { name: '★ Favorited' }).waitFor();
  await page.getByRole('alert').waitFor({ state: 'detached' });
  assert.equal(await page.getByRole('button', { name: '★ Favorited' }).getAttribute('aria-pressed'), 'true');
  assert.equal((await counts.innerText()).trim(), '0 / 0 / 3');
  assert.equal((await t.client(viewer.key).market.get(ids.charlie)).favorited, true);
  await page.getByRole('button', { name: '★ Favorited' }).click();
  await page.getByRole('button', { name: '☆ Favorite' }).waitFor();
  assert.equal((await counts.innerText()).trim(), '0 / 0 / 2');
  assert.equal((await t.client(viewer.key).market.get(ids.charlie)).favorited, false);
});

test('an agent deleted after its page opened: Favorite and Start a session say so', { skip }, async () => {
  const { page } = tab;
  const gone = `filler-${String(FILLERS).padStart(2, '0')}`;
  await page.goto(`${t.url}/market/${encodeURIComponent(ids[gone])}`);
  await page.getByRole('heading', { name: gone }).waitFor();
  assert.equal((await t.api('DELETE', `/api/v1/agents/${encodeURIComponent(ids[gone])}`, { token: owner.key })).status, 204);
  await page.getByRole('button', { name: '☆ Favorite' }).click();
  await page.getByRole('alert').filter({ hasText: 'agent not found (404, code 4040)' }).waitFor();
  assert.equal(await page.getByRole('button', { name: '☆ Favorite' }).count(), 1, 'still not a favorite');
  // The favorite's error goes when the next action starts; the session's refusal takes its place.
  await page.evaluate(() => document.querySelector('[role="alert"]')!.setAttribute('data-seen', ''));
  await page.getByRole('button', { name: 'Start a session' }).click();
  await page.locator('[role="alert"]:not([data-seen])').filter({ hasText: 'agent not found (404, code 4040)' }).waitFor();
  assert.match(new URL(page.url()).pathname, /^\/market\//, 'still on the agent page');
  assert.equal((await t.client(viewer.key).sessions.list({})).items.length, 0);
});

test('Start a session reads "Starting…" and takes no second click while the hub creates it, then opens the session', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${t.url}/market/${encodeURIComponent(ids.alpha)}`);
  const release = await holdNext(page, (u, m) => u.pathname === '/api/v1/sessions' && m === 'POST');
  await page.getByRole('button', { name: 'Start a session' }).click();
  const starting = page.getByRole('button', { name: 'Starting…' });
  await starting.waitFor();
  assert.ok(await starting.isDisabled());
  await release();
  await page.waitForURL((u) => u.pathname.startsWith('/sessions/'));
  const id = decodeURIComponent(new URL(page.url()).pathname.slice('/sessions/'.length));
  assert.equal((await t.client(viewer.key).sessions.get(id)).agentId, ids.alpha);
  assert.equal((await t.client(viewer.key).sessions.list({})).total, 1, 'one session');
});
