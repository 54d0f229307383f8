// `npm run bench`: runs every bench module present (each exports `run()` and
// writes its own section, baseline beside the measured target, when asked
// to), one after the other in this process, into a fresh bench/RESULTS.md
// headed by the machine and the date (a partial run, BENCH_ONLY=…, appends
// under a header of its own instead). A missing module is listed as missing;
// a failing one is recorded and the others still run.
//
//   npm run bench                      (BENCH_ONLY=http,cross-node to pick; BENCH_SECONDS for every module;
//                                       BENCH_RECORD=0: print only, bench/RESULTS.md untouched, as for each module run alone)
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { recording } from './main.js';
import { machineCpuTimes } from './proc-cpu.js';
import { verdictsOf, verdictsTable, type Verdict } from './verdicts.js';

const MODULES = ['http', 'hosts', 'hosts-cluster', 'dispatch', 'sql-calls', 'db-call', 'vault', 'cross-node', 'unit-costs', 'startup'];
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));

function sh(cmd: string): string {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

function machine(): string {
  const cpu = cpus()[0]?.model?.trim() ?? '?';
  return [
    `nproc ${sh('nproc')} (${cpu})`,
    `memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `Node ${process.version}`,
    `${sh('uname -sr')}`,
    `database ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}`,
    `Redis ${process.env.REDIS_URL ? 'REDIS_URL set' : 'not configured'}`,
  ].join(', ');
}

/** The machine's CPU time counters (Linux /proc/stat): total and the part the hypervisor gave to other guests. */
export const cpuTimes = machineCpuTimes;

/** Share of the CPU time stolen by the hypervisor between two readings, e.g. "3 %". */
export function stolen(a: ReturnType<typeof cpuTimes>, b: ReturnType<typeof cpuTimes>): string {
  if (!a || !b || b.total <= a.total) return 'n/a';
  return `${Math.round(((b.steal - a.steal) / (b.total - a.total)) * 100)} %`;
}

export async function runAll(only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean), record = recording()): Promise<number> {
  const started = new Date();
  const append = (file: string, text: string) => void (record && appendFileSync(file, text));
  // Appended: bench/RESULTS.md is the history every earlier figure is quoted from (a full run once rewrote it whole).
  const fresh = !existsSync(RESULTS);
  if (record) (fresh ? writeFileSync : appendFileSync)(
    RESULTS,
    [
      fresh ? '# Bench results\n' : '',
      only ? `\n# Partial suite run (${only.join(', ')})` : '\n# Full suite run',
      '',
      `Suite run of ${started.toISOString()} (\`npm run bench\`). Machine: ${machine()}. Load average at the start ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`,
      'Each section below comes from one module and sets its target beside its baseline measured in the same run; p50/p99 are medians and 99th percentiles of per-request latency.',
      '',
    ].join('\n'),
  );
  let failures = 0;
  const summary: string[] = [];
  const verdicts: Array<Verdict & { module: string }> = [];
  for (const name of MODULES) {
    if (only && !only.includes(name)) continue;
    const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
    if (!existsSync(file)) {
      summary.push(`| ${name} | missing (bench/${name}.ts not present) | | |`);
      continue;
    }
    const t0 = Date.now();
    const cpu0 = cpuTimes();
    console.log(`bench ${name}: running`);
    try {
      const mod = (await import(pathToFileURL(file).href)) as { run?: (o: { write?: boolean }) => Promise<unknown> };
      if (typeof mod.run !== 'function') throw new Error('exports no run()');
      const result = await mod.run({ write: record });
      verdicts.push(...verdictsOf(result).map((v) => ({ ...v, module: name })));
      summary.push(`| ${name} | done | ${((Date.now() - t0) / 1000).toFixed(1)} s | ${stolen(cpu0, cpuTimes())} |`);
    } catch (e) {
      failures++;
      const msg = e instanceof Error ? e.message : String(e);
      console.error(`bench ${name} failed:`, e);
      append(RESULTS, `\n## ${name} — failed\n\n\`${msg.replace(/`/g, "'").slice(0, 500)}\`\n`);
      summary.push(`| ${name} | failed | ${((Date.now() - t0) / 1000).toFixed(1)} s | ${stolen(cpu0, cpuTimes())} |`);
    }
  }
  append(
    RESULTS,
    ['', '## Suite summary', '', '| module | outcome | time | CPU stolen by the hypervisor |', '|---|---|---:|---:|', ...summary, '',
      'This machine is a virtual one: CPU time stolen by the hypervisor (other guests) slows every figure of a module, baselines included; a module run with more than a few percent stolen reads slower than the machine is.', '', `Finished ${new Date().toISOString()}; load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`, '',
      ...(verdicts.length ? ["## Issue 15's targets in this run", '', ...verdictsTable(verdicts), ''] : [])].join('\n'),
  );
  console.log(summary.join('\n'));
  if (verdicts.length) console.log(verdictsTable(verdicts).join('\n'));
  return failures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAll().then(
    (failures) => process.exit(failures ? 1 : 0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
