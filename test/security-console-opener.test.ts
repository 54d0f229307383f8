// Audit (forty-fifth session): the console page was served without Cross-Origin-Opener-Policy. A site on another origin that
// opens the console (window.open, e.g. behind an "Open Agent Hub" button) keeps a live handle to the
// console's window after the user signs in there, and can later navigate that signed-in tab to a
// page of its own (a lookalike "session expired, paste your API key" page: reverse tabnabbing), or
// probe it (window.length, closed) for cross-site leaks. `Cross-Origin-Opener-Policy: same-origin`
// on the console's HTML severs the handle: the opener then sees the window as closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { closeConsoleTest, noBrowser, openConsole, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
let t: TestHub;
let tab: ConsoleTab;
let evil: Server;
let evilUrl: string;
let user: { id: string; key: string };

before(async () => {
  if (skip) return;
  t = await startTestHub();
  user = await t.user('opened-by-evil');
  // Another origin (same host, another port): the attacker's site.
  evil = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(req.url === '/phish'
      ? '<!doctype html><title>Agent Hub</title><h1>Session expired</h1><label>API key <input type=password></label>'
      : '<!doctype html><title>Evil</title><button id=go>Open Agent Hub</button>');
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  tab = await openConsole(t.url);
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close(), () => new Promise<void>((r) => evil.close(() => r()))] });
});

test('a cross-origin opener cannot keep a handle on the console window and navigate it', { skip }, async () => {
  const { page, context } = tab;
  await page.goto(evilUrl + '/');
  const popupP = context.waitForEvent('page');
  await page.evaluate((hub) => {
    document.getElementById('go')!.addEventListener('click', () => { (window as any).w = window.open(hub + '/signin', 'hub'); });
  }, t.url);
  await page.click('#go');
  const popup = await popupP;
  // The user signs in in the console window the other site opened.
  await popup.getByLabel('API key').fill(user.key);
  await popup.getByRole('button', { name: 'Sign in', exact: true }).click();
  await popup.getByRole('button', { name: 'Sign out' }).waitFor();

  const handle = await page.evaluate(() => ({ closed: (window as any).w.closed as boolean }));
  // Later, the other site swaps the signed-in console for its own page.
  await page.evaluate((to) => { try { (window as any).w.location = to; } catch { /* severed */ } }, evilUrl + '/phish');
  await popup.waitForTimeout(1500);
  const now = popup.isClosed() ? '(closed)' : popup.url();
  assert.ok(handle.closed && !now.startsWith(evilUrl),
    `the opener on ${evilUrl} still holds the console window (closed=${handle.closed}) and navigated the signed-in console tab to ${now}`);
});
