// The console's chat in a real Chromium, against a hub with the real
// agent-host CLI and the fake engine (test/fixtures/fake-claude.mjs): find the
// agent in the market, start a session, watch the answer stream in with its
// thinking, tool call and result, see the cost; queue messages (positions,
// cancel), stop a running turn; drop the network mid-turn and see the text
// complete with nothing lost; page back past the latest 50 messages; a failed run says why, and a message
// the hub refuses stays in the box. The browser reaches the hub through a proxy
// whose connections the test cuts (the host does not).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, fakeEngineRuns, pidAlive, type AgentHostProcess } from './helpers/host.js';
import { startCutProxy, type CutProxy } from './helpers/cut-proxy.js';
import { closeConsoleTest, noBrowser, openConsole, shot, signInAs, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'console-chat-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');

let t: TestHub;
let proxy: CutProxy;
let host: AgentHostProcess;
let tab: ConsoleTab;
let owner: { id: string; key: string };
let viewer: { id: string; key: string };
let agentId: string;
let sessionId: string;

const claudeRuns = () => fakeEngineRuns(logFile);
const alive = pidAlive;
const session = async () => (await t.api('GET', `/api/v1/sessions/${sessionId}`, { token: viewer.key })).body.data;

before(async () => {
  if (skip) return;
  t = await startTestHub();
  proxy = await startCutProxy(t.hub.port);
  owner = await t.user('chat-owner');
  viewer = await t.user('chat-viewer');
  const pk = await t.api('POST', '/api/v1/hosts/pair-key', { token: owner.key });
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk.body.data.pairKey, '--work-root', workRoot, '--capacity', '2', '--name', 'chat-host'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  const hostId = (await host.waitFor(/connected to \S+ as (\S+)/, 90_000)).match(/as (\S+)/)![1];
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'echobot', desc: 'Echoes what you say', cat: 'coding', tags: ['echo'], scope: 'public', step: 'submit', hostId, engine: 'claude-code', workDir: 'proj' } });
    return r.status === 201 ? r : undefined;
  });
  agentId = a.body.data.id;
  assert.equal((await t.api('POST', `/api/v1/admin/agents/${encodeURIComponent(agentId)}/approve`, { token: t.adminKey })).status, 200);
  tab = await openConsole(proxy.url);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, {
    failedLoadsProvoked: true, // cut streams, the hub away, 429s
    then: [
      () => host?.kill('SIGKILL'),
      () => { for (const r of claudeRuns()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL'); },
      () => proxy?.close(),
      () => t?.close(),
    ],
  });
});

/** The conversation's finished messages of a kind. */
const msgs = (kind: string) => tab.page.getByRole('list', { name: 'Conversation' }).locator(`li.msg[data-kind="${kind}"]`);
const live = () => tab.page.getByTestId('live');

async function send(text: string) {
  const { page } = tab;
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: /^(Send|Queue)$/ }).click();
}

test('find the agent in the market, start a session, watch the answer stream in with thinking, tool call, result and cost', { skip }, async () => {
  const { page } = tab;
  await signInAs(page, proxy.url, viewer.key);
  await page.goto(proxy.url + '/');
  await page.getByLabel('Search').fill('echobot');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('list', { name: 'Agents' }).getByRole('link', { name: 'echobot' }).click();
  await page.getByRole('button', { name: 'Start a session' }).click();
  await page.waitForURL(/\/sessions\/[^/]+$/);
  sessionId = decodeURIComponent(page.url().split('/').pop()!);
  await page.getByText('No messages yet.').waitFor();

  // The engine pauses after its first delta: the page shows the text so far, live.
  const prompt = 'hello [thinking] [tools] [deltas:4] [sleep:2500]';
  const answer = `echo: ${prompt}`;
  await send(prompt);
  await live().getByText('echo: ', { exact: false }).waitFor();
  await page.getByText('● Live').waitFor();
  assert.ok(answer.startsWith((await live().locator('.body').innerText()).replace('▍', '')));
  await shot(page, 'chat-streaming');

  // The turn ends: the persisted history replaces the live text.
  await msgs('text').filter({ hasText: answer }).waitFor();
  await live().waitFor({ state: 'detached' });
  await msgs('thinking').getByText('Thinking').waitFor();
  await msgs('tool_use').getByText('Bash').waitFor();
  assert.match(await msgs('tool_use').innerText(), /"command": "ls"/);
  assert.match(await msgs('tool_result').innerText(), /a\.txt/);
  const cost = (await t.api('GET', `/api/v1/sessions/${sessionId}/cost`, { token: viewer.key })).body.data;
  assert.ok(cost.cost > 0);
  await page.getByTestId('cost').getByText(`Cost: ${cost.cost} tokens`).waitFor();
  await page.getByTestId('session-status').getByText('active').waitFor();
  await shot(page, 'chat');
});

test('queue two messages behind a running turn: positions, cancel one, then stop the turn', { skip }, async () => {
  const { page } = tab;
  await send('long job [sleep:60000]');
  await live().getByText('echo: ', { exact: false }).waitFor();
  const run = await eventually(async () => claudeRuns().find((r) => r.prompt === 'long job [sleep:60000]'));

  await send('second message');
  const queued = page.getByTestId('queued');
  await queued.filter({ hasText: 'second message' }).getByText('#1').waitFor();
  await send('third message');
  await queued.filter({ hasText: 'third message' }).getByText('#2').waitFor();
  assert.equal((await session()).pendingRuns, 2);
  await page.getByRole('heading', { name: 'Waiting messages (2)' }).waitFor();
  await shot(page, 'chat-queue');

  // Cancel the first waiting message: the other moves up.
  await page.getByRole('button', { name: 'Cancel waiting message 1' }).click();
  await queued.filter({ hasText: 'second message' }).waitFor({ state: 'detached' });
  await queued.filter({ hasText: 'third message' }).getByText('#1').waitFor();
  const q = (await t.api('GET', `/api/v1/sessions/${sessionId}/queue`, { token: viewer.key })).body.data;
  assert.deepEqual(q.items.map((i: any) => [i.content, i.position]), [['third message', 1]]);

  // Stop: the turn ends as stopped, its partial text kept and marked, the waiting message discarded.
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByText('Stopped.').waitFor();
  await msgs('text').filter({ hasText: 'interrupted' }).waitFor();
  await queued.first().waitFor({ state: 'detached' });
  await page.getByTestId('session-status').getByText('active').waitFor();
  const s = await session();
  assert.deepEqual([s.status, s.pendingRuns], ['active', 0]);
  await eventually(async () => !alive(run.pid), 10_000, 50);
  await shot(page, 'chat-stopped');
});

test('the network drops mid-turn: the page says so, reconnects with Last-Event-ID and the text completes without loss', { skip }, async () => {
  const { page } = tab;
  // Every text the live answer shows, as the page renders it.
  await page.evaluate(() => {
    const seen: string[] = ((window as any).__liveTexts = []);
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid="live"] .body');
      if (el) seen.push((el.textContent ?? '').replace('▍', ''));
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  const prompt = 'through a flaky network [deltas:8] [sleep:1500]';
  const answer = `echo: ${prompt}`;
  await send(prompt);
  await live().getByText('echo: ', { exact: false }).waitFor();
  const before = (await live().locator('.body').innerText()).replace('▍', '');
  assert.ok(before.length < answer.length, 'only the first delta so far');

  // Offline, and the open stream cut: reconnect attempts fail until the network is back.
  await page.context().setOffline(true);
  assert.ok(proxy.cut() >= 1);
  await page.getByText(/^Connection lost: reconnecting \(attempt [1-9]\d*\)…$/).waitFor();
  await shot(page, 'chat-reconnecting');
  // The turn ends on the hub while the page is away.
  await eventually(async () => (await session()).status === 'active', 20_000, 100);
  await page.context().setOffline(false);

  await msgs('text').filter({ hasText: answer }).waitFor({ timeout: 30_000 });
  const texts: string[] = await page.evaluate(() => (window as any).__liveTexts);
  assert.ok(texts.includes(answer), `the live answer was completed from the stream: ${JSON.stringify(texts.slice(-3))}`);
  assert.ok(texts.every((x) => answer.startsWith(x)), 'never a doubled or missing piece');
  assert.equal(await page.getByText(/Connection lost/).count(), 0);
  assert.deepEqual(tab.pageErrors.filter((e) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED|net::/.test(e)), []);
});

test('the session list shows the session under its group with its status', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('link', { name: '← Sessions' }).click();
  await page.getByRole('heading', { name: /今天/ }).waitFor();
  const row = page.getByRole('link', { name: (await session()).title });
  await row.waitFor();
  await shot(page, 'sessions');
});

test('a long session shows the latest 50 messages; Load older messages pages back to the first', { skip }, async () => {
  const { page } = tab;
  // 60 short messages written straight into the history (no engine turns needed to make it long).
  const db = t.hub.ctx.em().getConnection();
  for (let i = 1; i <= 60; i++) {
    await db.execute(`insert into session_messages (id, session_id, role, kind, content, seq, provider) values (?, ?, 'user', 'text', ?, 0, 'claude-code')`, [`msg_filler${i}`, sessionId, `filler ${i}`]);
  }
  const first = 'hello [thinking] [tools] [deltas:4] [sleep:2500]';
  await page.goto(`${proxy.url}/sessions/${encodeURIComponent(sessionId)}`);
  await msgs('text').filter({ hasText: 'filler 60' }).waitFor();
  assert.equal(await msgs('text').filter({ hasText: first }).count(), 0, 'the first message is beyond the latest 50');
  assert.equal(await msgs('text').filter({ hasText: /^filler 10$/ }).count(), 0);
  await page.getByRole('button', { name: 'Load older messages' }).click();
  await msgs('text').filter({ hasText: first }).first().waitFor();
  await msgs('text').filter({ hasText: 'filler 10' }).first().waitFor();
  // Everything is on the page now, oldest first, and there is nothing more to load.
  await page.getByRole('button', { name: 'Load older messages' }).waitFor({ state: 'detached' });
  const texts = await msgs('text').locator('.body').allInnerTexts();
  assert.equal(texts[0], first);
  assert.equal(texts.at(-1), 'filler 60');
  assert.equal(texts.filter((x) => /^filler \d+$/.test(x)).length, 60, 'each message once, none missing');
  assert.deepEqual(tab.pageErrors.filter((e) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED|net::/.test(e)), []);
});

test('a failed run says why; a message the hub refuses stays in the box, with the reason beside it', { skip }, async () => {
  const { page } = tab;
  await page.goto(`${proxy.url}/sessions/${encodeURIComponent(sessionId)}`);
  await page.getByTestId('session-status').getByText('active').waitFor();
  await send('break [exit:3]');
  await page.getByText(/^The run failed: /).waitFor();
  await page.getByTestId('session-status').getByText('active').waitFor();

  // No tokens left: the hub refuses the next message (429) and the text is not lost.
  const db = t.hub.ctx.em().getConnection();
  const [{ balance }] = await db.execute(`select balance from users where id = ?`, [viewer.id]);
  await db.execute(`update users set balance = 0 where id = ?`, [viewer.id]);
  const box = page.getByRole('textbox', { name: 'Message' });
  try {
    await send('a message worth keeping');
    await page.getByRole('alert').filter({ hasText: '4091' }).waitFor();
    assert.equal(await box.inputValue(), 'a message worth keeping');
    assert.equal((await session()).status, 'active');
  } finally {
    await db.execute(`update users set balance = ? where id = ?`, [balance, viewer.id]);
  }

  // The same while a turn runs (the message would have waited its turn).
  await box.fill('');
  await send('long job [sleep:60000]');
  await live().getByText('echo: ', { exact: false }).waitFor();
  await db.execute(`update users set balance = 0 where id = ?`, [viewer.id]);
  try {
    await send('a waiting message worth keeping');
    await page.getByRole('alert').filter({ hasText: '4091' }).waitFor();
    assert.equal(await box.inputValue(), 'a waiting message worth keeping');
  } finally {
    await db.execute(`update users set balance = ? where id = ?`, [balance, viewer.id]);
  }
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByText('Stopped.').waitFor();
  await page.getByTestId('session-status').getByText('active').waitFor();
});
