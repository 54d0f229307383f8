// Key vault bench: seal+open operations per second through the piscina pool
// against inline node:crypto on the main thread, and what each does to the
// event loop of an HTTP server in the same process (monitorEventLoopDelay,
// plus request latency seen by a client in another process).
// Run: npx tsx bench/vault.ts [seconds-per-scenario]   (appends to bench/RESULTS.md)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Vault } from '../src/model-configs/vault.js';
import { seal, open } from '../src/model-configs/vault-worker.mjs';

const KEY_TEXT = 'sk-ant-api03-' + randomBytes(60).toString('base64url'); // a realistic key length (~93 chars)
const AAD = 'mc-0123456789abcdef';

export interface Scenario {
  name: string;
  opsPerSec: number;
  eldP50: number;
  eldP99: number;
  eldMax: number;
  httpP50: number;
  httpP99: number;
  httpReqs: number;
}

/** Sequential GETs from a child process for `ms`; prints [latencies…] as JSON. */
const CLIENT = `
const url = process.argv[1]; const end = Date.now() + Number(process.argv[2]); const lat = [];
(async () => { while (Date.now() < end) { const t = performance.now(); const r = await fetch(url); await r.text(); lat.push(performance.now() - t); }
process.stdout.write(JSON.stringify(lat)); })();`;

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function scenario(name: string, ms: number, url: string, load: (stop: () => boolean) => Promise<number>): Promise<Scenario> {
  const client = spawn(process.execPath, ['-e', CLIENT, url, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  client.stdout.on('data', (d) => (out += d));
  const done = new Promise<void>((r) => client.on('exit', () => r()));
  await new Promise((r) => setTimeout(r, 150)); // let the client start before loading the loop
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const started = performance.now();
  const deadline = started + ms - 150;
  const ops = await load(() => performance.now() >= deadline);
  const secs = (performance.now() - started) / 1000;
  h.disable();
  await done;
  const lat = (JSON.parse(out || '[]') as number[]).sort((a, b) => a - b);
  return {
    name,
    opsPerSec: Math.round(ops / secs),
    eldP50: h.percentile(50) / 1e6,
    eldP99: h.percentile(99) / 1e6,
    eldMax: h.max / 1e6,
    httpP50: pct(lat, 50),
    httpP99: pct(lat, 99),
    httpReqs: lat.length,
  };
}

export async function run(opts: { seconds?: number; write?: boolean } = {}): Promise<Scenario[]> {
  const ms = (opts.seconds ?? 3) * 1000;
  const key = randomBytes(32);
  const server = createServer((_req, res) => res.end('{"code":"0","message":"ok","data":null}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const results: Scenario[] = [];

  results.push(await scenario('idle (no crypto load)', ms, url, async (stop) => {
    while (!stop()) await new Promise((r) => setTimeout(r, 20));
    return 0;
  }));

  // Inline: the hub sealing/opening on its own thread, in batches as requests arrive.
  for (const batch of [10, 1000]) {
    results.push(await scenario(`inline node:crypto, ${batch} ops per tick`, ms, url, async (stop) => {
      let n = 0;
      while (!stop()) {
        for (let i = 0; i < batch; i++) {
          open(key, seal(key, KEY_TEXT, AAD), AAD);
          n++;
        }
        await new Promise((r) => setImmediate(r));
      }
      return n;
    }));
  }

  for (const threads of [1, 2]) {
    const vault = new Vault(key, { maxThreads: threads });
    await vault.open(await vault.seal(KEY_TEXT, AAD), AAD); // warm the first worker
    results.push(await scenario(`piscina pool, ${threads} thread(s), 64 in flight`, ms, url, async (stop) => {
      let n = 0;
      const lane = async () => {
        while (!stop()) {
          const s = await vault.seal(KEY_TEXT, AAD);
          if ((await vault.open(s, AAD)) !== KEY_TEXT) throw new Error('vault round trip mismatch');
          n++;
        }
      };
      await Promise.all(Array.from({ length: 64 }, lane));
      return n;
    }));
    await vault.close();
  }
  server.close();

  if (opts.write !== false) writeResults(results, ms);
  return results;
}

function writeResults(results: Scenario[], ms: number): void {
  const file = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  if (!existsSync(file)) writeFileSync(file, '# Bench results\n');
  const c = cpus();
  const f = (n: number) => n.toFixed(2);
  const lines = [
    '',
    `## Key vault (bench/vault.ts) — ${new Date().toISOString()}`,
    `Machine: ${c.length} × ${c[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}, load average ${loadavg()[0].toFixed(1)} at the end (the machine was shared with other test runs). One op = seal + open of a ${KEY_TEXT.length}-char key (AES-256-GCM); ${ms / 1000} s per scenario; HTTP latency from sequential GETs by a client in another process.`,
    '',
    '| scenario | seal+open ops/s | event-loop delay p50 / p99 / max (ms) | HTTP p50 / p99 (ms) | HTTP requests |',
    '|---|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.name} | ${r.opsPerSec.toLocaleString('en-US')} | ${f(r.eldP50)} / ${f(r.eldP99)} / ${f(r.eldMax)} | ${f(r.httpP50)} / ${f(r.httpP99)} | ${r.httpReqs} |`),
    '',
  ];
  appendFileSync(file, lines.join('\n'));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const seconds = Number(process.argv[2] ?? 3);
  run({ seconds }).then((r) => console.table(r), (e) => {
    console.error(e);
    process.exit(1);
  });
}
