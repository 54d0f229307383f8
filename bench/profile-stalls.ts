// The stretches of a V8 .cpuprofile (BENCH_HUB_PROFILE) where the process ran
// without an idle sample for at least `min` ms (default 8), each with the
// functions that held it: what delays an event loop, as opposed to what costs
// the most in total (bench/profile-summary.ts). Stretches of one or two
// samples are mostly the process off the CPU, not work.
//
//   npx tsx bench/profile-stalls.ts file.cpuprofile [min=8] [top=30]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Profile } from './profile-summary.js';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }

export function stalls(p: Profile, minMs = 8, top = 30): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Line 0 is what tsx's transpiled modules report for every function: the file alone then.
  const name = (n: Node) => `${n.callFrame.functionName || '(anonymous)'}${n.callFrame.url ? ` ${n.callFrame.url.split('/').slice(-2).join('/')}${n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : ''}` : ''}`;
  const stack = (id: number) => {
    const s: string[] = [];
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) s.push(name(byId.get(x)!));
    return s;
  };
  const idle = (id: number) => byId.get(id)!.callFrame.functionName === '(idle)';
  const times: number[] = [];
  let t = p.startTime ?? 0;
  for (const d of p.timeDeltas) times.push((t += d));
  const runs: Array<[number, number, number]> = [];
  for (let i = 0; i < p.samples.length; ) {
    if (idle(p.samples[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < p.samples.length && !idle(p.samples[j + 1])) j++;
    const us = times[j] - times[i] + (p.timeDeltas[j + 1] ?? 0);
    if (us >= minMs * 1000) runs.push([i, j, us]);
    i = j + 1;
  }
  const out = [`stretches without an idle sample of ${minMs} ms or more: ${runs.length}`];
  for (const [a, b, us] of [...runs].sort((x, y) => y[2] - x[2]).slice(0, top)) {
    const self = new Map<string, number>();
    const incl = new Map<string, number>();
    for (let k = a; k <= b; k++) {
      const s = stack(p.samples[k]);
      self.set(s[0], (self.get(s[0]) ?? 0) + 1);
      for (const f of new Set(s)) incl.set(f, (incl.get(f) ?? 0) + 1);
    }
    const list = (m: Map<string, number>, n: number) => [...m].sort((x, y) => y[1] - x[1]).slice(0, n).map(([f, c]) => `${f} ${c}`).join(' | ');
    out.push(`at ${((times[a] - (p.startTime ?? 0)) / 1e6).toFixed(2)} s: ${(us / 1000).toFixed(1)} ms, ${b - a + 1} samples`);
    out.push(`  self: ${list(self, 5)}`);
    out.push(`  inclusive: ${list(new Map([...incl].filter(([f]) => !/^\((root|program)\)|processTicksAndRejections|callbackTrampoline/.test(f))), 8)}`);
  }
  return out.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, min, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/profile-stalls.ts file.cpuprofile [min ms = 8] [top = 30]');
    process.exit(2);
  }
  console.log(stalls(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(min ?? 8), Number(top ?? 30)));
}
