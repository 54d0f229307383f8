// Group commit: work items arriving in the same event-loop turn (and while
// earlier batches are in flight) are written with one call, each still
// getting its own answer or error. Used for message accepts (acceptManyIn)
// and run ends (run-end.ts). A batch holds at most one item per key (its
// session); an item whose key is in a batch in flight waits for that batch,
// so one session's items keep their order. An item answered RETRY (it wrote
// nothing) goes back to the head of the queue, still ahead of its key's later
// items; the next batch waits for its lock for a bounded time. Answered RETRY
// again (a lock held that long is not one of the hub's short transactions),
// it is written alone, beside the batches and outside their limit, waiting as
// long as it takes, so no batch waits behind it; its key stays busy meanwhile.
// Such items are written one at a time (one lane): however many sessions an
// outside transaction holds, they pin one pooled connection, not the pool. (Writing every skipped item alone at once was tried:
// at 2,000 messages/s the solo writes' locks made batches skip more sessions,
// 12 skips became 2,720 and throughput halved.)
import { HubError } from '../errors.js';
import { ChurnSet } from '../churn-map.js';
import type { SqlEm } from './sql.js';

/**
 * Batches in flight at once, unless the caller sets another bound. One: while a batch is written the
 * next one fills, so under load batches grow and each message costs fewer statements (at 500
 * messages/s, 4 in flight gave p99 ≈ 55 ms, 1 gave ≈ 21 ms in bench/dispatch.ts); when idle a
 * message waits for nobody.
 */
const MAX_INFLIGHT = 1;
/** Items per transaction at most. */
const MAX_BATCH = 64;

/** An item's answer when it wrote nothing and must be written again (hub_accept skipped its locked session). */
export const RETRY: unique symbol = Symbol('retry');

interface Pending<I, O> {
  item: I;
  /** Answered RETRY once already. */
  retried?: boolean;
  /** performance.now() when it was submitted (the linger counts from the oldest item waiting; its wait is observed from it). */
  at: number;
  resolve(r: O): void;
  reject(e: unknown): void;
}

export interface GroupOptions<I> {
  /** Batches in flight at once (a key is in one of them at most; default MAX_INFLIGHT). */
  maxInflight?: number;
  /**
   * How long a batch waits for more items after its first (0, the default: to the end of the
   * event-loop turn). A full batch, or `hurry()`, writes at once.
   */
  lingerMs?: number;
  /**
   * A batch's bound in bytes besides its count: items go in while their sizes add up to at most
   * `maxBytes` (an item larger than that goes alone). What one batch's statement carries stays
   * bounded however many large items arrive together.
   */
  budget?: { sizeOf(item: I): number; maxBytes: number };
  /**
   * Told of each item answered: seconds from its submission to the start of the call that wrote it
   * (waiting for a batch in flight, the linger, earlier calls that skipped it), and that call's.
   */
  observe?(waitSeconds: number, writeSeconds: number): void;
}

export class GroupCommit<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private inflight = 0;
  private busy = new ChurnSet<string>();
  private scheduled = false;
  /** The linger's timer, while a batch waits for more items. */
  private lingering?: NodeJS.Timeout;
  /** Items skipped twice, written one at a time (their keys are busy meanwhile). */
  private lane: Array<Pending<I, O>> = [];
  private laneRunning = false;
  /** Sizes of the pending items, added up (with a budget): a batch full by bytes goes without lingering. */
  private pendingBytes = 0;

  private readonly maxInflight: number;
  private readonly lingerMs: number;
  private readonly budget?: GroupOptions<I>['budget'];
  private readonly observe?: GroupOptions<I>['observe'];

  constructor(
    /** Where a batch's raw SQL runs: `many` is one atomic statement, so no transaction (and no entities). */
    private readonly em: () => SqlEm,
    /**
     * Writes one batch atomically; an error result is that item's own (it wrote nothing).
     * `alone`: one item skipped twice, which may now wait for its lock as long as it takes.
     */
    private readonly many: (em: SqlEm, items: I[], alone: boolean) => Promise<Array<O | HubError | typeof RETRY>>,
    private readonly keyOf: (item: I) => string,
    opts: GroupOptions<I> = {},
  ) {
    this.maxInflight = opts.maxInflight ?? MAX_INFLIGHT;
    this.lingerMs = opts.lingerMs ?? 0;
    this.budget = opts.budget;
    this.observe = opts.observe;
  }

  private write(items: I[], alone = false): Promise<Array<O | HubError | typeof RETRY>> {
    return this.many(this.em(), items, alone);
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject, at: performance.now() });
      if (this.budget) this.pendingBytes += this.budget.sizeOf(item);
      this.schedule();
    });
  }

  private schedule(): void {
    const full = this.pending.length >= MAX_BATCH || (this.budget !== undefined && this.pendingBytes >= this.budget.maxBytes);
    if (this.lingering && full) this.hurry();
    if (this.scheduled || this.inflight >= this.maxInflight || !this.pending.length) return;
    this.scheduled = true;
    const wait = this.lingerMs > 0 && !full ? this.lingerMs - (performance.now() - this.pending[0].at) : 0;
    if (wait >= 1) this.lingering = setTimeout(this.lingerOver, wait);
    else setImmediate(this.flushNow);
  }

  /**
   * Node counts a timer from its event loop's clock, read at the start of a turn, so the linger's timer can
   * fire a millisecond or so before `lingerMs` has passed since the oldest item's performance.now() (a CI run
   * saw 298.9 ms of a 300 ms linger): what is left, when a millisecond or more, is waited for (timers count whole milliseconds).
   */
  private readonly lingerOver = () => {
    const left = this.pending.length ? this.lingerMs - (performance.now() - this.pending[0].at) : 0;
    if (left >= 1) this.lingering = setTimeout(this.lingerOver, left);
    else this.flushNow();
  };

  private readonly flushNow = () => {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.scheduled = false;
    this.flush();
  };

  /** Items wait for them (a message for a session whose run end is pending): the batch lingering goes now. */
  hurry(): void {
    if (!this.lingering) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    setImmediate(this.flushNow);
  }

  private flush(): void {
    while (this.inflight < this.maxInflight && this.pending.length) {
      const batch: Array<Pending<I, O>> = [];
      const rest: Array<Pending<I, O>> = [];
      const held = new Set<string>(); // keys with an item in this batch or an earlier one left waiting: keep their order
      let bytes = 0;
      for (const p of this.pending) {
        const k = this.keyOf(p.item);
        const size = this.budget ? this.budget.sizeOf(p.item) : 0;
        const fits = !this.budget || !batch.length || bytes + size <= this.budget.maxBytes;
        if (batch.length < MAX_BATCH && fits && !this.busy.has(k) && !held.has(k)) {
          batch.push(p);
          bytes += size;
          held.add(k); // one item per key per batch: the next waits for this batch
        } else {
          held.add(k);
          rest.push(p);
        }
      }
      this.pending = rest;
      if (this.budget) this.pendingBytes -= bytes;
      if (!batch.length) return;
      void this.run(batch);
    }
  }

  /** Answers the item written by the call that ran from `t0` to `t1` (performance.now()). */
  private settle(p: Pending<I, O>, r: O | HubError, t0: number, t1: number): void {
    this.observe?.((t0 - p.at) / 1000, (t1 - t0) / 1000);
    if (r instanceof HubError) p.reject(r);
    else p.resolve(r);
  }

  private async run(batch: Array<Pending<I, O>>): Promise<void> {
    this.inflight++;
    const keys = new Set(batch.map((p) => this.keyOf(p.item)));
    for (const k of keys) this.busy.add(k);
    const again: Array<Pending<I, O>> = [];
    const alone: Array<Pending<I, O>> = [];
    const answer = (p: Pending<I, O>, r: O | HubError | typeof RETRY, t0: number, t1: number) => {
      if (r !== RETRY) return this.settle(p, r, t0, t1);
      (p.retried ? alone : again).push(p);
      p.retried = true;
    };
    try {
      const t0 = performance.now();
      const out = await this.write(batch.map((p) => p.item));
      const t1 = performance.now();
      out.forEach((r, i) => answer(batch[i], r, t0, t1));
    } catch (e) {
      if (batch.length === 1) batch[0].reject(e);
      // The batch failed as a whole (a database error): each item alone, so each gets its own answer.
      else {
        const t0 = performance.now();
        await Promise.all(batch.map((p) => this.write([p.item]).then(([r]) => answer(p, r, t0, performance.now()), p.reject)));
      }
    } finally {
      for (const k of keys) this.busy.delete(k);
      // In their order, ahead of everything that came since (their keys' later items among it).
      if (again.length) {
        this.pending.unshift(...again);
        if (this.budget) for (const p of again) this.pendingBytes += this.budget.sizeOf(p.item);
      }
      for (const p of alone) this.toLane(p);
      this.inflight--;
      this.schedule();
    }
  }

  /** Queues an item skipped twice for the lane; its key's later items wait for it. */
  private toLane(p: Pending<I, O>): void {
    this.busy.add(this.keyOf(p.item));
    this.lane.push(p);
    if (!this.laneRunning) void this.runLane();
  }

  /** Writes the lane's items by themselves, one at a time: each waits for its lock without holding up any batch. */
  private async runLane(): Promise<void> {
    this.laneRunning = true;
    for (let p = this.lane.shift(); p; p = this.lane.shift()) {
      const k = this.keyOf(p.item);
      try {
        const t0 = performance.now();
        const [r] = await this.write([p.item], true);
        if (r === RETRY) p.reject(new Error('GroupCommit: an item written alone was skipped again'));
        else this.settle(p, r, t0, performance.now());
      } catch (e) {
        p.reject(e);
      } finally {
        this.busy.delete(k);
        this.schedule();
      }
    }
    this.laneRunning = false;
  }
}
