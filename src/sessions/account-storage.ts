// What one account's sessions hold in all is bounded (ACCOUNT_STORED_MAX_BYTES): each session is
// (SESSION_STORED_MAX_BYTES) and a plan opens so many a day, but nothing bounded the sum, day after
// day — an account running its own agent on its own host (no usage reported: every run free) stored
// 5 GiB a day on the free plan, for good. Opening a session reads the sum (one indexed query, off the
// message path) and is refused past the bound. A message in a session already open is refused once its
// account was found full (the sum read again first, at most once a second, and at once on every node
// after a session's deletion: sessions deleted through any node make room); a node re-reads the sum of an account it accepts messages for at most every `checkMs`,
// in the background, so the message path pays no query; an account may pass the bound by what it
// writes in that time.
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { pooled } from '../db/pooled.js';
import { ChurnMap } from '../churn-map.js';
import { publishObj, subscribeObj } from '../bus/bus.js';

/** Bus topic: an account's sessions were deleted (its sum is read afresh on every node). */
const TOPIC = 'account-storage';

/** Accounts remembered per node; past it the memory starts over (each is read again at its next message). */
const KNOWN_MAX = 100_000;
/** How long an account read as full is refused from memory before its sum is read again. */
const FULL_RECHECK_MS = 1000;

interface Known {
  full: boolean;
  /** When the sum was last read (or a read of it failed). */
  at: number;
  /** The read in flight: every caller meanwhile shares it. */
  reading?: Promise<boolean>;
}

export class AccountStorage {
  private readonly known = new ChurnMap<string, Known>();
  private readonly unsub: () => void;

  constructor(
    private readonly ctx: HubContext,
    private readonly maxBytes = ctx.config.accountStoredMaxBytes,
    private readonly checkMs = 60_000,
  ) {
    this.unsub = subscribeObj<{ userId: string }>(ctx.bus, TOPIC, (m) => void this.known.delete(m.userId));
  }

  close(): void {
    this.unsub();
  }

  /**
   * The message path: nothing to wait for while the account is known under its bound (a stale or unknown
   * one is read again in the background). Known full, the sum is read again before refusing, at most once a
   * second (sessions deleted through another node make room at once; refusals are rare).
   */
  onMessage(userId: string): void | Promise<void> {
    if (!this.maxBytes) return;
    const k = this.known.get(userId);
    if (k?.full) {
      if (Date.now() - k.at < FULL_RECHECK_MS) throw this.full();
      return this.assertRoom(userId);
    }
    if (!k || Date.now() - k.at >= this.checkMs) void this.read(userId).catch(() => undefined);
  }

  /** Opening a session: the sum read now. */
  async assertRoom(userId: string): Promise<void> {
    if (this.maxBytes && (await this.read(userId))) throw this.full();
  }

  /** A session deleted: the account's sum is read afresh at its next message, on every node. */
  forget(userId: string): void {
    this.known.delete(userId);
    publishObj(this.ctx.bus, TOPIC, { userId });
  }

  /** Whether the account is full, read now, or by the read already in flight. A failed read keeps what was known and waits its turn. */
  private read(userId: string): Promise<boolean> {
    if (this.known.size >= KNOWN_MAX && !this.known.has(userId)) this.known.clear();
    let k = this.known.get(userId);
    if (!k) this.known.set(userId, (k = { full: false, at: 0 }));
    if (k.reading) return k.reading;
    const known = k;
    known.reading = pooled<{ b: string | null }>(this.ctx.orm, `select sum(stored_bytes)::text as b from sessions where user_id = ?`, [userId])
      .then(([r]) => (known.full = Number(r?.b ?? 0) >= this.maxBytes), (e) => {
        if (known.full) return true; // known full: still refused, from memory
        throw e;
      })
      .finally(() => {
        known.at = Date.now();
        known.reading = undefined;
      });
    return known.reading;
  }

  private full() {
    return fail('CONFLICT', `this account's sessions hold the most an account may store (${Math.floor(this.maxBytes / 1048576)} MiB of messages and output): delete sessions to make room`);
  }
}
