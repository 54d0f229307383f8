// "Wait until an item matching a predicate has arrived (or already has)":
// the frames a fake host receives, the events an SSE reader reads.
export class Arrivals<T> {
  readonly items: T[] = [];
  private waiters: Array<{ pred: (x: T) => boolean; resolve: (x: T) => void }> = [];

  constructor(private readonly what: string) {}

  /** Records an item and wakes the waiters it satisfies. */
  push(x: T): void {
    this.items.push(x);
    for (const w of this.waiters.filter((w) => w.pred(x))) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(x);
    }
  }

  /** The first item (already arrived or still to come) matching `pred`; rejects after `timeoutMs`. */
  until(pred: (x: T) => boolean, timeoutMs: number, got?: () => string): Promise<T> {
    const seen = this.items.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        reject(new Error(`${this.what}: not received in time${got ? `; got ${got()}` : ''}`));
      }, timeoutMs).unref();
    });
  }
}
