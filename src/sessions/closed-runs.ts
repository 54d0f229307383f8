// Runs whose end is written, remembered for a minute: a late run.end's usage
// is still kept and charged, and the run's run.start is not sent again. The
// whole state of a short turn is about 1.5 KB of heap and a busy node ends
// thousands a minute, so only what a late frame needs stays, oldest first,
// swept by one timer that runs only while something is remembered.

/** How long a run's end stays known after it was written (a late run.end's usage, a run.start not sent again). */
export const CLOSED_KEEP_MS = 60_000;

/** What a run keeps once its end is written. */
export interface ClosedRun {
  runId: string;
  hostId: string;
  /** A late usage's write in progress (none once the end is written: nothing else is pending). */
  chain?: Promise<void>;
  /** Date.now() when it closed. */
  at: number;
}

export class ClosedRuns {
  /** In the order they closed: the sweep stops at the first one still kept. */
  private readonly runs = new Map<string, ClosedRun>();
  private sweeper?: NodeJS.Timeout;

  get(runId: string): ClosedRun | undefined {
    return this.runs.get(runId);
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Remembers a run from now; `chain`: a late usage's write still in progress. */
  add(runId: string, hostId: string, chain?: Promise<void>): void {
    this.runs.set(runId, { runId, hostId, chain, at: Date.now() });
    this.sweeper ??= setInterval(() => this.sweep(), CLOSED_KEEP_MS / 12);
    this.sweeper.unref?.();
  }

  /** The writes still in progress (a node closing waits for them). */
  chains(): Array<Promise<void> | undefined> {
    return [...this.runs.values()].map((c) => c.chain);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(now = Date.now()): void {
    const before = now - CLOSED_KEEP_MS;
    for (const [runId, c] of this.runs) {
      if (c.at > before) break; // oldest first
      this.runs.delete(runId);
    }
    if (!this.runs.size) this.close();
  }
}
