// A V8 .cpuprofile (BENCH_HUB_PROFILE) summarised in text: the functions with
// the most self time and the most inclusive time (a function's time counted
// once per sample however deep it recurses), as shares of the samples
// (`busy`: of the samples the thread was not idle in, the idle share said apart).
//
//   npx tsx bench/profile-summary.ts file.cpuprofile [top=25]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stalls } from './profile-stalls.js';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
export interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime?: number }

export function summarise(p: Profile, top = 25, opts: { busy?: boolean } = {}): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: Node) => {
    const f = n.callFrame;
    const file = f.url ? relative(process.cwd(), f.url.replace(/^file:\/\//, '')) : '';
    // tsx's transpiled modules report line 0 for every function: the file alone then.
    return `${f.functionName || '(anonymous)'}${file ? ` ${file}${f.lineNumber > 0 ? `:${f.lineNumber + 1}` : ''}` : ''}`;
  };
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    const leaf = byId.get(id)!;
    if (opts.busy && leaf.callFrame.functionName === '(idle)') return void (idle += dt);
    total += dt;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: Node | undefined = leaf; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const k = name(n);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  });
  const table = (m: Map<string, number>, title: string) => [
    `${title} (of ${(total / 1e3).toFixed(0)} ms ${opts.busy ? `busy; idle ${(idle / 1e3).toFixed(0)} ms more` : 'sampled'})`,
    ...[...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)} %  ${(v / 1e3).toFixed(0).padStart(6)} ms  ${k}`),
  ].join('\n');
  return `${table(self, 'self')}\n\n${table(incl, 'inclusive')}`;
}

/** Functions listed per table (self, inclusive) and stretches listed, in a profile's text for RESULTS.md. */
const TEXT_TOP = 15;
const TEXT_STRETCHES = 3;
/** A stretch this long without an idle sample is listed (shorter ones are mostly the process descheduled). */
const TEXT_STALL_MS = 8;

/** A profile in text for RESULTS.md: self and inclusive time over the busy samples, then the longest stretches without an idle sample. */
export function profileText(p: Profile): string {
  return `${summarise(p, TEXT_TOP, { busy: true })}\n\n${stalls(p, TEXT_STALL_MS, TEXT_STRETCHES)}`;
}

// Only as the entry point: other bench scripts import summarise() and have arguments of their own.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2]) console.log(summarise(JSON.parse(readFileSync(process.argv[2], 'utf8')), Number(process.argv[3] ?? 25)));
