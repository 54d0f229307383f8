// One batch call in flight at a time, fed by everything that arrived while
// the previous one ran. A reconnect storm of thousands of hosts a second
// then costs a few dozen lookups a second, each larger, rather than one per
// event-loop turn; when idle an item waits for nobody (the call goes on the
// next turn). Used for the per-hello lookups of the host channel (credential,
// open runs, waiting work, owed model settings).

export class Coalescer<T> {
  private items: T[] = [];
  private running = false;
  private scheduled = false;

  /**
   * `run` gets the items in arrival order, at most `max` at a time, and handles its own errors
   * (one thrown is dropped: the items' owners must learn of a failure from `run` itself).
   */
  constructor(
    private readonly run: (items: T[]) => Promise<unknown>,
    private readonly max = 1000,
  ) {}

  add(...items: T[]): void {
    this.items.push(...items);
    this.kick();
  }

  /** Items waiting for the next call. */
  get pending(): number {
    return this.items.length;
  }

  private kick(): void {
    if (this.running || this.scheduled || !this.items.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.running || !this.items.length) return;
    this.running = true;
    const batch = this.items.length <= this.max ? this.items.splice(0) : this.items.splice(0, this.max);
    try {
      await this.run(batch);
    } catch {
      // `run` reports its own failures.
    } finally {
      this.running = false;
      this.kick();
    }
  }
}
