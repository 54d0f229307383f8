// Open SSE streams per account on this node. Each stream holds a Bus
// subscription and a socket; an account may hold at most `max` at once.
import { fail } from '../errors.js';

export class StreamSlots {
  private open = new Map<string, number>();
  private total = 0;

  /** `max` is read on every call; 0 disables the cap. */
  constructor(private readonly max: () => number) {}

  /** Takes a slot for `account` or throws STREAM_LIMIT; returns the release function (safe to call twice). */
  acquire(account: string): () => void {
    const n = this.open.get(account) ?? 0;
    const max = this.max();
    if (max > 0 && n >= max) throw fail('STREAM_LIMIT', `at most ${max} event streams may be open at once per account`);
    this.open.set(account, n + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.open.get(account) ?? 1) - 1;
      if (left > 0) this.open.set(account, left);
      else this.open.delete(account);
    };
  }

  /** Slots held, all accounts. */
  get held(): number {
    return this.total;
  }
}
