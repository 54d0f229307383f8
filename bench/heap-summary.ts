// A V8 sampling heap profile (BENCH_HUB_HEAP, bench/hub-child.ts) summarised
// in text: the functions that allocated the most bytes themselves, and the
// most counting what they called, as shares of all sampled allocation.
// With `per=N` (e.g. the deltas relayed in the profiled window) bytes per unit too.
//
//   npx tsx bench/heap-summary.ts file.heapprofile [top=25] [per=N]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { runIfMain } from './main.js';

interface Frame { functionName: string; url: string; lineNumber: number }
interface HeapNode { callFrame: Frame; selfSize: number; children: HeapNode[] }

export function summariseHeap(root: HeapNode, top = 25, per = 0): string {
  const name = (f: Frame) => `${f.functionName || '(anonymous)'}${f.url ? ` ${relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}` : ''}`;
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  // Inclusive: a function counted once per path however deep it recurses.
  const walk = (n: HeapNode, path: Set<string>): number => {
    const k = name(n.callFrame);
    let sub = n.selfSize;
    self.set(k, (self.get(k) ?? 0) + n.selfSize);
    total += n.selfSize;
    const fresh = !path.has(k);
    if (fresh) path.add(k);
    for (const c of n.children) sub += walk(c, path);
    if (fresh) {
      path.delete(k);
      incl.set(k, (incl.get(k) ?? 0) + sub);
    }
    return sub;
  };
  walk(root, new Set());
  const rows = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} % ${(v / 1024).toFixed(0).padStart(9)} KiB${per ? ` ${(v / per).toFixed(0).padStart(6)} B/unit` : ''}  ${k}`);
  return [`self (of ${(total / 1048576).toFixed(1)} MiB sampled${per ? `, ${(total / per).toFixed(0)} B per unit` : ''})`, ...rows(self), '', 'inclusive', ...rows(incl)].join('\n');
}

runIfMain(import.meta.url, async () => {
  const [file, top, per] = process.argv.slice(2);
  if (!file) throw new Error('usage: heap-summary.ts file.heapprofile [top] [per]');
  const p = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  console.log(summariseHeap(p.head, Number(top ?? 25), Number(per ?? 0)));
});
