// How many of a kind one account may hold, whatever its plan: each is a row kept for good, created
// by a cheap call (600 a minute under the general rate limit), and API keys each carry their own
// rate-limit budget. Far above any real use; checked before the insert, so calls racing each other
// may overshoot by the number in flight.
import { fail } from './errors.js';

export const API_KEYS_PER_ACCOUNT = 50;
export const MODEL_CONFIGS_PER_ACCOUNT = 100;
/** Unpaid channel orders that can still be paid: each made a signed call to the payment provider with the merchant's credentials. */
export const PENDING_ORDERS_PER_ACCOUNT = 20;
/** Channel orders made within an order's lifetime (30 minutes), whatever became of them: cancelling frees a pending slot at once. */
export const CHANNEL_ORDERS_PER_WINDOW = 40;
/** Identity-link attempts not yet finished (each lives 10 minutes): a link needs one at a time. */
export const LINKS_PENDING_PER_ACCOUNT = 20;
/** Live browser logins (each a row and a refresh token): a sign-in past it ends the oldest. */
export const LOGINS_PER_ACCOUNT = 50;
/** Pair keys not yet used nor expired (each lives 10 minutes): pairing needs one at a time. */
export const PAIR_KEYS_PER_ACCOUNT = 20;

/** Favorites and shared agents joined: every node holds a signed-in caller's in memory, and reads them all on a cold cache. */
export const FAVORITES_PER_ACCOUNT = 1000;
export const MEMBERSHIPS_PER_ACCOUNT = 1000;

/** The CONFLICT (409) of a full account: `cap` of `what` held. */
export const overCap = (cap: number, what: string, remedy = 'delete one first') => fail('CONFLICT', `an account holds at most ${cap} ${what}; ${remedy}`);

/** CONFLICT (409) when one more would pass `cap`. */
export function refuseOverCap(held: number, cap: number, what: string, remedy = 'delete one first'): void {
  if (held >= cap) throw overCap(cap, what, remedy);
}

/** Agents an account deletes in 24 hours before it may create more: each deletion keeps its retired id for good. */
export const AGENT_RETIREMENTS_PER_DAY = 100;
