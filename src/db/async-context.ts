// Node 20's AsyncLocalStorage follows async work through promise hooks, and
// once a store has been used they stay on for every promise of the process.
// MikroORM opens one inside every flush and transaction (its transaction,
// request and raw-fragment stores), so from the first flush on the message
// path — raw SQL that never reads them (db/direct.ts) — paid for the hooks on
// each of its promises: 2–10 % of the hub's CPU per message, by machine, and a
// sixth of the bytes it allocates (bench/RESULTS.md). Here a store stays on only
// while a `run` of it has not settled: when the last open run settles, the
// stores used are disabled, which turns the hooks off until the next run.
// Node 24's AsyncLocalStorage needs no hooks and is left as it is.
import { AsyncLocalStorage } from 'node:async_hooks';

type Store = AsyncLocalStorage<unknown> & { enabled?: boolean; _enable?: unknown };

let scoped = false;

/**
 * Scopes every AsyncLocalStorage of the process to its open runs (idempotent; a no-op where the
 * storage needs no hooks). A run whose callback returns a promise is open until it settles; one
 * that returns anything else, until it returns. A store entered with `enterWith` has no end and is
 * never disabled here. Answers whether stores are scoped.
 */
export function scopeAsyncContexts(): boolean {
  const proto = AsyncLocalStorage.prototype as Store;
  if (scoped || typeof proto._enable !== 'function') return scoped;
  scoped = true;
  const run = proto.run;
  const enterWith = proto.enterWith;
  const used = new Set<Store>();
  const pinned = new WeakSet<Store>();
  let open = 0;
  const settled = () => {
    if (--open > 0) return;
    for (const s of used) if (!pinned.has(s)) s.disable();
    used.clear();
  };
  proto.run = function (this: Store, store: unknown, callback: (...a: unknown[]) => unknown, ...args: unknown[]) {
    open++;
    used.add(this);
    let out: unknown;
    try {
      out = run.call(this, store, callback, ...args);
    } catch (e) {
      settled();
      throw e;
    }
    // The caller still sees the run's own promise settle as before (this handler only counts it).
    if (isThenable(out)) out.then(settled, settled);
    else settled();
    return out;
  } as typeof proto.run;
  proto.enterWith = function (this: Store, store: unknown) {
    pinned.add(this);
    return enterWith.call(this, store);
  };
  return true;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
