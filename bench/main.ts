// The entry guard of a bench module run on its own (`npx tsx bench/X.ts`):
// its main runs, then the process exits 0, or prints the error and exits 1,
// so a hub, pool or child process left open never keeps it alive. Imported by
// bench/run.ts instead, the module only exports its run().
import { pathToFileURL } from 'node:url';

/** Whether a run appends its figures to bench/RESULTS.md: `BENCH_RECORD=0` prints them only (a trial, an A/B). */
export function recording(): boolean {
  return process.env.BENCH_RECORD !== '0';
}

/** Runs `main` when the module at `moduleUrl` (its import.meta.url) is the entry point, then exits. */
export function runIfMain(moduleUrl: string, main: () => Promise<unknown>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
