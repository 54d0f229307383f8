// Drives the console in a real headless Chromium (Debian's `chromium` package,
// installed by .ci/run when missing) through playwright-core. Nothing is
// downloaded: the browser is the system one, and a test skips with a reason
// when it is absent.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The browser binary, or undefined (tests then skip: `{ skip: noBrowser() }`). */
export function chromiumPath(): string | undefined {
  return CANDIDATES.find((p): p is string => !!p && existsSync(p));
}

/** A skip reason for node:test when there is no browser, else false. */
export function noBrowser(): string | false {
  // CI's second pass (embedded database) sets it: the console does not depend on the database kind.
  if (process.env.BROWSER_TESTS === '0') return 'BROWSER_TESTS=0: the console was tested in the browser in the PostgreSQL pass';
  return chromiumPath() ? false : 'no Chromium on this machine (apt-get install chromium, or set CHROMIUM_PATH)';
}

export interface ConsoleTab {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Errors the page threw or logged with console.error, for a test to assert on. */
  pageErrors: string[];
  close(): Promise<void>;
}

// The flags keep Chromium off the network it cannot reach here (closed sandbox):
// without them it retries Google's hosts at every start.
const FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Opens the console of the hub at `hubUrl` in a fresh profile (no storage shared between tests). */
export async function openConsole(hubUrl: string, path = '/'): Promise<ConsoleTab> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: guard the test with { skip: noBrowser() }');
  // Playwright gives the browser a fresh temporary profile of its own.
  const browser = await chromium.launch({ executablePath, headless: true, args: FLAGS, timeout: 60_000 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: hubUrl });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await page.goto(hubUrl + path);
  return {
    browser,
    context,
    page,
    pageErrors,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}

/** Signs in through the console's own sign-in page with an API key, then waits for the signed-in navigation. */
export async function signInAs(page: Page, hubUrl: string, apiKey: string): Promise<void> {
  await page.goto(hubUrl + '/signin');
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const SHOTS = resolve(import.meta.dirname, '../../docs/console');

/**
 * A full-page screenshot named for the page it shows. Written to docs/console/
 * (committed, linked from the README) when CONSOLE_SCREENSHOTS=1, else to a
 * temporary folder so ordinary test runs leave the tree clean.
 */
export async function shot(page: Page, name: string): Promise<string> {
  const dir = process.env.CONSOLE_SCREENSHOTS === '1' ? SHOTS : join(tmpdir(), 'hub-console-shots');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Answers the page's next dialog (a `confirm()`): accepted or dismissed. Returns what it asked — '' while
 * none was shown, so a click that acted without asking is seen.
 */
export function answerNextDialog(page: Page, accept: boolean): () => string {
  let asked = '';
  page.once('dialog', (d) => {
    asked = d.message();
    void (accept ? d.accept() : d.dismiss());
  });
  return () => asked;
}

/**
 * Holds the page's next API call matching `match` (to see what the page shows while the hub works); the
 * returned function lets it through and waits until it went.
 */
export async function holdNext(page: Page, match: (url: URL, method: string) => boolean): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let sent!: () => void;
  const gone = new Promise<void>((r) => (sent = r));
  const url = (u: URL) => u.pathname.startsWith('/api/v1/');
  let armed = true;
  const handler = async (route: Route) => {
    if (!armed || !match(new URL(route.request().url()), route.request().method())) return route.fallback();
    armed = false;
    await held;
    await route.continue();
    sent();
  };
  await page.route(url, handler);
  return async () => {
    release();
    await gone;
    await page.unroute(url, handler);
  };
}

/**
 * A console test file's closing step, written once: takes the page's script errors, closes the tab, then
 * runs `then` in order (hosts, the hub, …), and only then asserts that nothing reached the page's console —
 * so a failing check never leaves a hub running. `failedLoadsProvoked`: the tests make requests fail (the hub
 * refuses them, or a connection is cut), which the browser itself logs as "Failed to load resource"; those
 * lines, and only those, are left out.
 */
export async function closeConsoleTest(
  tab: ConsoleTab | undefined,
  opts: { failedLoadsProvoked?: boolean; then?: Array<() => unknown> } = {},
): Promise<void> {
  const thrown = (tab?.pageErrors ?? []).filter((e) => !(opts.failedLoadsProvoked && e.includes('Failed to load resource')));
  await tab?.close();
  for (const close of opts.then ?? []) await close();
  assert.deepEqual(thrown, [], 'no script errors in the page');
}

/**
 * Holds every call of the page matching `match` (a list's polls, say, which would otherwise take a row
 * away before the test acts on it) until the returned function lets them through and stops holding.
 */
export async function holdAll(page: Page, match: (url: URL) => boolean): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const handler = async (route: Route) => {
    await held;
    await route.continue();
  };
  await page.route(match, handler);
  return async () => {
    release();
    await page.unroute(match, handler);
  };
}
