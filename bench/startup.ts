// Start-up bench (target 6): spawns `npm start` exactly as the README does and
// times it until GET /api/v1/health answers 200 — first start on a fresh
// DATA_DIR (embedded PGlite), restart on the same DATA_DIR, and a start on
// PostgreSQL (DATABASE_URL, a database of its own) — with the hub process's
// RSS a second after it is ready and the CPU time it used to get there (the
// figure a loaded, shared machine distorts least). Medians of STARTUP_RUNS (3).
// Run: npx tsx bench/startup.ts   (appends its section to bench/RESULTS.md)
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTimes, stolen } from './run.js';
import { createTestDatabase } from '../test/helpers/hub.js';
import { recording } from './main.js';
import { processCpuMs } from './proc-cpu.js';
import { profileWanted } from './miss-profile.js';
import { judged, type Verdict } from './verdicts.js';
import { profileText, type Profile } from './profile-summary.js';

// STARTUP_ROOT: another checkout whose `npm start` to time (a baseline: an older commit exported beside this one).
const ROOT = process.env.STARTUP_ROOT ?? fileURLToPath(new URL('..', import.meta.url));
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const TARGET = { first: 5, restart: 2, rssPg: 150 };
const SECRET = 'bench-startup-secret-key-0123456789abcdef0123';

interface Start {
  seconds: number;
  cpuSeconds: number;
  rssMb: number;
  origin: string;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

/** Every descendant of pid (npm → sh → node), from /proc. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (ppid === pid) out.push(Number(d), ...descendants(Number(d)));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The hub process under `npm start`: the deepest node process (npm → sh → node, and tsx's own child in older checkouts). */
function hubPid(root: number): number {
  const pid = descendants(root).filter((p) => {
    try {
      return /(^|\/)node$/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0]);
    } catch {
      return false;
    }
  }).pop();
  if (!pid) throw new Error('hub process not found under npm start');
  return pid;
}

const cpuSeconds = (pid: number): number => (processCpuMs(pid) ?? NaN) / 1000;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(url);
    await r.text();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** SIGTERM to the hub itself; waits until both it and npm are gone (the next start reuses the DATA_DIR). */
async function stop(child: ChildProcess, pid: number): Promise<void> {
  const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
  process.kill(pid, 'SIGTERM');
  while (existsSync(`/proc/${pid}`)) await new Promise((r) => setTimeout(r, 50));
  await exited;
}

/** One `npm start` until healthy; stopped again after the RSS reading. `profileDir`: the hub writes its V8 CPU profile there as it exits. */
async function startOnce(env: Record<string, string | undefined>, profileDir?: string): Promise<Start & { pid: number }> {
  const port = await freePort();
  let log = '';
  const t0 = performance.now();
  // Profiled: what `npm start` runs (scripts/start.mjs, the hub in that process), with Node's --cpu-prof, which NODE_OPTIONS may not carry.
  const [cmd, args] = profileDir ? [process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'scripts/start.mjs']] : ['npm', ['start']];
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/api/v1/health`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${log.slice(-2000)}`);
    if (await healthy(url)) break;
    if (performance.now() - t0 > 300_000) throw new Error('hub not healthy within 300 s');
    await new Promise((r) => setTimeout(r, 25));
  }
  const seconds = (performance.now() - t0) / 1000;
  const pid = profileDir ? child.pid! : hubPid(child.pid!);
  const cpu = cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, 1000)); // what it holds once settled, not mid-start
  const rss = rssMb(pid);
  await stop(child, pid);
  const origin = /"origin":"(\w+)"/.exec(log)?.[1] ?? (env.DATABASE_URL ? 'postgresql' : '?');
  return { seconds, cpuSeconds: cpu, rssMb: rss, origin, pid };
}

/**
 * A start that missed its time: one more like it with the hub's CPU profiled from its first line
 * (Node's --cpu-prof; npm's own profile is left out), in text (bench/miss-profile.ts).
 */
async function profiledStart(what: string, env: Record<string, string | undefined>, before?: () => Promise<unknown>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hub-startup-prof-'));
  try {
    await before?.();
    const s = await startOnce(env, dir);
    const file = readdirSync(dir).find((f) => f.includes(`.${s.pid}.`));
    if (!file) return `\n**${what}** The hub (pid ${s.pid}) wrote no profile.\n`;
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    return ['', `**${what}** That start (\`node --cpu-prof scripts/start.mjs\`, what \`npm start\` runs, without npm): ${s.seconds.toFixed(2)} s to healthy, ${s.cpuSeconds.toFixed(2)} s of CPU; the profile covers the hub's whole life, its stop included.`, '', '```text', profileText(p), '```', ''].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Target 6: each kind of start against its line (none for a kind not run). */
export function startupVerdicts(first: Start[], restart: Start[], pg: Start[]): Verdict[] {
  const secs = (xs: Start[]) => median(xs.map((x) => x.seconds));
  const time = (kind: string, xs: Start[], target: number): Verdict => (xs.length
    ? { target: `6. ${kind} ≤ ${target} s`, outcome: judged(secs(xs) <= target), figure: `${secs(xs).toFixed(2)} s (median of ${xs.length})` }
    : { target: `6. ${kind} ≤ ${target} s`, outcome: 'no verdict', figure: 'not run (STARTUP_RUNS=0)' });
  return [
    time('first start on a fresh DATA_DIR (embedded)', first, TARGET.first),
    time('restart on the same DATA_DIR (embedded)', restart, TARGET.restart),
    pg.length
      ? { target: `6. hub RSS after start on PostgreSQL ≤ ${TARGET.rssPg} MB`, outcome: judged(median(pg.map((x) => x.rssMb)) <= TARGET.rssPg), figure: `${median(pg.map((x) => x.rssMb))} MB` }
      : { target: `6. hub RSS after start on PostgreSQL ≤ ${TARGET.rssPg} MB`, outcome: 'no verdict', figure: 'not run (no DATABASE_URL)' },
  ];
}

export async function run(opts: { write?: boolean } = {}): Promise<{ verdicts: Verdict[] }> {
  const runs = Number(process.env.STARTUP_RUNS ?? 3);
  const load0 = loadavg();
  const stat0 = cpuTimes();
  const first: Start[] = [];
  const restart: Start[] = [];
  const profiles: string[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'hub-startup-'));
    try {
      const env = { DATABASE_URL: undefined, REDIS_URL: undefined, SECRET_KEY: undefined, ADMIN_API_KEY: undefined, DATA_DIR: dir };
      first.push(await startOnce(env));
      restart.push(await startOnce(env));
      console.log(`run ${i + 1}: first ${first[i].seconds.toFixed(2)} s (${first[i].origin}), restart ${restart[i].seconds.toFixed(2)} s`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // A start over its target: the hub's CPU profile of one more start of that kind.
  const embedded = { DATABASE_URL: undefined, REDIS_URL: undefined, SECRET_KEY: undefined, ADMIN_API_KEY: undefined };
  const [firstVerdict, restartVerdict] = startupVerdicts(first, restart, []);
  for (const [kind, xs, target, v] of [['first start', first, TARGET.first, firstVerdict], ['restart', restart, TARGET.restart, restartVerdict]] as const) {
    const missed = v.outcome === 'NOT met';
    if (!xs.length || !profileWanted(missed)) continue;
    const dir = mkdtempSync(join(tmpdir(), 'hub-startup-'));
    try {
      const env = { ...embedded, DATA_DIR: dir };
      profiles.push(await profiledStart(`The hub's CPU profile over one more ${kind} on the embedded database (≤ ${target} s ${missed ? 'missed' : 'not missed'}; not one of the runs above).`, env,
        kind === 'restart' ? () => startOnce(env) : undefined));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const pg: Start[] = [];
  const base = process.env.DATABASE_URL;
  if (base) {
    const db = await createTestDatabase(base);
    const dir = mkdtempSync(join(tmpdir(), 'hub-startup-pg-'));
    try {
      await startOnce({ DATABASE_URL: db.url, SECRET_KEY: SECRET, REDIS_URL: undefined, DATA_DIR: dir }); // migrates the empty database
      for (let i = 0; i < runs; i++) pg.push(await startOnce({ DATABASE_URL: db.url, SECRET_KEY: SECRET, REDIS_URL: undefined, DATA_DIR: dir }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  }
  const row = (name: string, xs: Start[], target: string) =>
    xs.length
      ? `| ${name} | ${median(xs.map((x) => x.seconds)).toFixed(2)} s | ${median(xs.map((x) => x.cpuSeconds)).toFixed(2)} s | ${median(xs.map((x) => x.rssMb))} MB | ${[...new Set(xs.map((x) => x.origin))].join(', ')} | ${target} |`
      : `| ${name} | not run (no DATABASE_URL) | | | | ${target} |`;
  const lines = [
    '',
    `## startup — \`npm start\` until /api/v1/health answers (median of ${runs})${process.env.STARTUP_ROOT ? ` — in ${ROOT}` : ''}`,
    '',
    `${new Date().toISOString()}; ${cpus().length} × ${cpus()[0]?.model?.trim()}; load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${loadavg().map((x) => x.toFixed(2)).join(' ')}; CPU stolen by the hypervisor during the runs ${stolen(stat0, cpuTimes())}.`,
    '',
    '| start | wall time to healthy | hub CPU time to healthy | RSS 1 s after | database from | target |',
    '|---|---:|---:|---:|---|---|',
    row('first start, fresh DATA_DIR (embedded)', first, `≤ ${TARGET.first} s`),
    row('restart, same DATA_DIR (embedded)', restart, `≤ ${TARGET.restart} s`),
    row('start on PostgreSQL (migrated)', pg, `RSS ≤ ${TARGET.rssPg} MB`),
    ...profiles,
    '',
  ];
  console.log(lines.join('\n'));
  if (opts.write) appendFileSync(RESULTS, lines.join('\n'));
  return { verdicts: startupVerdicts(first, restart, pg) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run({ write: recording() }).then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
