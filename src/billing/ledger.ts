// The one rule for money: users.balance changes only together with a ledger
// entry, in one transaction, and never below zero. Every module that moves
// tokens (orders, store, admin grants, run costs) calls applyBalanceChange.
import type { EntityManager } from '@mikro-orm/postgresql';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import type { LedgerType } from './entities.js';

export type { LedgerType } from './entities.js';

export interface BalanceChange {
  entryId: string;
  userId: string;
  amount: number;
  type: LedgerType;
  ref: string | null;
  balance: number;
}

/**
 * Adds `delta` (signed, non-zero integer tokens) to the user's balance and
 * records it. Joins the caller's transaction when `em` is inside one (as a
 * savepoint), so a failure later in the caller's work undoes the change too.
 * Throws INSUFFICIENT_BALANCE (409, 4091) when a debit would take the balance
 * below zero, NOT_FOUND when the user does not exist. A credit always lands, even
 * when the balance stays below zero after it (a run on one's own agent is charged
 * in full, below zero too): a paid pack, a refund or a grant must never be refused. Note: a User entity already loaded
 * in `em` keeps its old `balance`; re-read it if you need the new one.
 */
export async function applyBalanceChange(
  em: EntityManager,
  userId: string,
  delta: number,
  type: LedgerType,
  ref: string | null = null,
  note: string | null = null,
): Promise<BalanceChange> {
  if (!Number.isSafeInteger(delta) || delta === 0) throw new Error(`balance change must be a non-zero integer, got ${delta}`);
  return em.transactional(async (tx) => {
    // One conditional update: concurrent spends cannot both pass the check (credits skip it).
    const rows = await tx.execute(
      `update users set balance = balance + ?, updated_at = now() where id = ? and (? > 0 or balance + ? >= 0) returning balance`,
      [delta, userId, delta, delta],
    );
    if (!rows.length) {
      const exists = await tx.execute(`select 1 from users where id = ?`, [userId]);
      if (!exists.length) throw fail('NOT_FOUND', 'user not found');
      throw fail('INSUFFICIENT_BALANCE');
    }
    const balance = Number(rows[0].balance);
    const entryId = newId('led');
    await tx.execute(
      `insert into ledger_entries (id, user_id, amount, type, ref, note, balance_after) values (?, ?, ?, ?, ?, ?, ?)`,
      [entryId, userId, delta, type, ref, note, balance],
    );
    return { entryId, userId, amount: delta, type, ref, balance };
  });
}

/** A new account's starter tokens (`STARTER_TOKENS`): one `grant` entry, in the creating transaction. */
export async function grantStarterTokens(em: EntityManager, userId: string, amount: number): Promise<number> {
  if (amount <= 0) return 0;
  return (await applyBalanceChange(em, userId, amount, 'grant', null, 'starter tokens')).balance;
}
