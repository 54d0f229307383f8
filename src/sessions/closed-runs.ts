// Runs whose end is written, remembered for a minute: a late run.end's usage
// is still kept and charged, and the run's run.start is not sent again. A
// busy node ends thousands of runs a minute (120,000 at 2,000 messages/s), all
// of them live in the old generation that every major collection marks, so a
// run costs one entry of a Map (its id → its host's id; the id string is the
// only object) and nothing else: the minute is kept in generations of a few
// seconds, and a whole generation goes at once, by one timer that runs only
// while something is remembered (no per-run deadline, delete or rehash).

/** How long a run's end stays known after it was written (a late run.end's usage, a run.start not sent again), at least. */
export const CLOSED_KEEP_MS = 60_000;
/** A generation takes the runs closed over this long; a run is kept at most this much longer than CLOSED_KEEP_MS. */
export const CLOSED_GENERATION_MS = CLOSED_KEEP_MS / 6;

/** What a closed run keeps. */
export interface ClosedRun {
  runId: string;
  hostId: string;
  /** Its late writes in progress (a late usage's write), if any. */
  chain?: Promise<void>;
}

interface Generation {
  /** run id → host id. */
  runs: Map<string, string>;
  /** Date.now() of its first and last add. */
  from: number;
  last: number;
}

export class ClosedRuns {
  /** Oldest first. */
  private gens: Generation[] = [];
  /** Late writes in progress, by run (rare); an entry goes once its chain has settled. */
  private readonly pending = new Map<string, Promise<void>>();
  private sweeper?: NodeJS.Timeout;

  /** The host of a closed run, or undefined when the run is not (or no longer) remembered. */
  hostOf(runId: string): string | undefined {
    // Newest first: a run looked up just after its end is in the last generation.
    for (let i = this.gens.length - 1; i >= 0; i--) {
      const h = this.gens[i].runs.get(runId);
      if (h !== undefined) return h;
    }
    return undefined;
  }

  has(runId: string): boolean {
    return this.hostOf(runId) !== undefined;
  }

  get(runId: string): ClosedRun | undefined {
    const hostId = this.hostOf(runId);
    return hostId === undefined ? undefined : { runId, hostId, chain: this.pending.get(runId) };
  }

  /** Remembers a run from `now`; `chain`: a late write still in progress. */
  add(runId: string, hostId: string, chain?: Promise<void>, now = Date.now()): void {
    let g = this.gens[this.gens.length - 1];
    if (!g || now - g.from >= CLOSED_GENERATION_MS) this.gens.push((g = { runs: new Map(), from: now, last: now }));
    g.runs.set(runId, hostId);
    g.last = Math.max(g.last, now);
    if (chain) this.keep(runId, chain);
    this.sweeper ??= setInterval(() => this.sweep(), CLOSED_GENERATION_MS);
    this.sweeper.unref?.();
  }

  /** Runs `write` once the closed run's late writes so far have settled, whatever their outcome (a node closing waits for them: chains()). */
  follow(runId: string, write: () => Promise<void>): void {
    this.keep(runId, (this.pending.get(runId) ?? Promise.resolve()).then(write, write));
  }

  /** The writes still in progress (a node closing waits for them). */
  chains(): Array<Promise<void>> {
    return [...this.pending.values()];
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private keep(runId: string, chain: Promise<void>): void {
    this.pending.set(runId, chain);
    const drop = () => void (this.pending.get(runId) === chain && this.pending.delete(runId));
    chain.then(drop, drop);
  }

  /** Drops the generations whose newest run is CLOSED_KEEP_MS old. */
  private sweep(now = Date.now()): void {
    while (this.gens.length && now - this.gens[0].last >= CLOSED_KEEP_MS) this.gens.shift();
    if (!this.gens.length) this.close();
  }
}
