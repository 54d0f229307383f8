// The console's weight and first load (issue 13): the bytes of the page, the
// bundle and the stylesheet as served (and gzipped, as a proxy in front would
// send them), and the time from navigation to the market's first list in a
// real headless Chromium — cold (new profile, empty cache) and warm (same
// profile, assets from cache) — beside the same browser loading a bare static
// page from the same hub process (the floor the browser itself costs).
// A hub on the embedded database (or DATABASE_URL) in this process.
//   npx tsx bench/console-load.ts            (CONSOLE_LOADS=15)
import { gzipSync } from 'node:zlib';
import { cpus, loadavg } from 'node:os';
import { appendFileSync } from 'node:fs';
import { machineCpuTimes } from './proc-cpu.js';
import { stolen as stolenShare } from './run.js';
import { chromium } from 'playwright-core';
import { startTestHub } from '../test/helpers/hub.js';
import { chromiumPath } from '../test/helpers/browser.js';

const LOADS = Number(process.env.CONSOLE_LOADS ?? 15);
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

export async function run(opts: { write?: boolean } = {}): Promise<void> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium (apt-get install chromium)');
  const t = await startTestHub();
  const cpu0 = machineCpuTimes();
  try {
    const html = await (await fetch(t.url + '/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]);
    const sizes: Array<{ name: string; raw: number; gz: number }> = [{ name: 'page (/)', raw: Buffer.byteLength(html), gz: gzipSync(html).length }];
    for (const a of assets) {
      const body = Buffer.from(await (await fetch(t.url + a)).arrayBuffer());
      sizes.push({ name: a.replace(/\.[0-9a-f]{12}\./, '.*.'), raw: body.length, gz: gzipSync(body).length });
    }

    const browser = await chromium.launch({ executablePath, headless: true, args: FLAGS });
    const cold: number[] = [];
    const warm: number[] = [];
    const floor: number[] = [];
    // The floor: the same browser fetching a tiny page from the same server (the API's health document).
    for (let i = 0; i < LOADS; i++) {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      const t0 = performance.now();
      await page.goto(t.url + '/api/v1/health', { waitUntil: 'load' });
      floor.push(performance.now() - t0);
      await ctx.close();
    }
    for (let i = 0; i < LOADS; i++) {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      let t0 = performance.now();
      await page.goto(t.url + '/');
      await page.getByRole('heading', { name: 'Market' }).waitFor();
      await page.getByText(/No agents match\.|Page 1/).first().waitFor();
      cold.push(performance.now() - t0);
      t0 = performance.now();
      await page.goto(t.url + '/');
      await page.getByText(/No agents match\.|Page 1/).first().waitFor();
      warm.push(performance.now() - t0);
      await ctx.close();
    }
    await browser.close();

    const stolen = stolenShare(cpu0, machineCpuTimes());
    const lines = [
      '',
      `## console — bundle size and first load (${new Date().toISOString().slice(0, 10)})`,
      '',
      `Machine: ${cpus().length} × ${cpus()[0]?.model?.trim()}, Node ${process.version}, Chromium at ${executablePath}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end, ${stolen} CPU stolen. \`npx tsx bench/console-load.ts\`, ${LOADS} loads each.`,
      '',
      '| served | bytes | gzipped |',
      '|---|---:|---:|',
      ...sizes.map((s) => `| ${s.name} | ${kib(s.raw)} | ${kib(s.gz)} |`),
      `| total | ${kib(sizes.reduce((a, s) => a + s.raw, 0))} | ${kib(sizes.reduce((a, s) => a + s.gz, 0))} |`,
      '',
      '| load (navigation → the market list drawn) | median | ratio to the floor |',
      '|---|---:|---:|',
      `| floor: a tiny JSON page from the same hub, new profile | ${median(floor).toFixed(0)} ms | 1.0× |`,
      `| console, cold (new profile, empty cache) | ${median(cold).toFixed(0)} ms | ${(median(cold) / median(floor)).toFixed(1)}× |`,
      `| console, warm (assets from cache) | ${median(warm).toFixed(0)} ms | ${(median(warm) / median(floor)).toFixed(1)}× |`,
      '',
      'The hub serves the assets uncompressed (a proxy in front may gzip them; the gzipped column says what that would send). The bundle is built in memory at the first request and cached with a content hash in its name (`Cache-Control: immutable`), so the warm load fetches only the page and the API answers.',
      '',
    ];
    console.log(lines.join('\n'));
    if (opts.write || process.env.BENCH_WRITE === '1') appendFileSync(new URL('./RESULTS.md', import.meta.url), lines.join('\n'));
  } finally {
    await t.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run({ write: process.env.BENCH_WRITE === '1' });
