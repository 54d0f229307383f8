// Issue 15's targets as one suite run judged them. Each module answers its verdicts with its result,
// by the same rules its own table words them, and `npm run bench` (bench/run.ts) ends its part of
// bench/RESULTS.md with all of them in one table: what was met, missed, or could not be judged
// because the baseline itself was saturated or missed an absolute line (the machine, not the hub).

export type Outcome = 'met' | 'NOT met' | 'no verdict';

export interface Verdict {
  /** The target number and the part of it judged, e.g. "2. dispatch at 2000 msg/s: p99 ≤ 2× the bare relay". */
  target: string;
  outcome: Outcome;
  /** The figure judged; for no verdict, why there is none. */
  figure: string;
}

export const judged = (ok: boolean): Outcome => (ok ? 'met' : 'NOT met');

/** The table's lines, in the order the modules ran; a count of each outcome under it. */
export function verdictsTable(rows: Array<Verdict & { module: string }>): string[] {
  if (!rows.length) return [];
  const count = (o: Outcome) => rows.filter((r) => r.outcome === o).length;
  return [
    '| target | outcome | figure | module |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.target} | ${r.outcome === 'NOT met' ? '**NOT met**' : r.outcome} | ${r.figure} | ${r.module} |`),
    '',
    `${count('met')} met, ${count('NOT met')} not met, ${count('no verdict')} without a verdict (a saturated baseline, or a bare floor that misses an absolute line itself, measures the machine). A missed target's profile is under its module's table (bench/miss-profile.ts).`,
  ];
}

/** The verdicts a module's result carries, if any. */
export function verdictsOf(result: unknown): Verdict[] {
  const v = (result as { verdicts?: unknown } | undefined)?.verdicts;
  return Array.isArray(v) ? (v as Verdict[]) : [];
}
