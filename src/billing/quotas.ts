// Plan quotas where they bite: pairing a host, creating an agent, opening a
// session. The limits are the plan's `quotas` (the catalogue), read per check
// from the plan in effect (a paid plan while unexpired, else the free plan).
// Administrators are exempt; PLAN_QUOTAS=off turns enforcement off.
// The check runs just before the insert it guards, so creations racing each
// other can overshoot by the number in flight (a commercial bound, not a
// security one; recorded in docs/decisions.md).
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';

export type QuotaKind = 'hosts' | 'agents' | 'sessionsPerDay';

const LABEL: Record<QuotaKind, string> = {
  hosts: 'hosts',
  agents: 'agents',
  sessionsPerDay: 'sessions per day',
};

// How much of each quota a user has used; the day is the UTC day.
const USED: Record<QuotaKind, string> = {
  hosts: `(select count(*) from hosts h where h.user_id = u.id)`,
  agents: `(select count(*) from agents a where a.owner_id = u.id)`,
  // Opened today, deleted or not (countSessionToday below).
  sessionsPerDay: `coalesce((select o.n from session_opens o where o.user_id = u.id and o.day = (now() at time zone 'utc')::date), 0)`,
};

/**
 * Counts a session opened today, in the transaction that inserts it; the user's earlier days go in
 * the same statement. What sessionsPerDay reads: a deleted session still counts. With quotas off
 * nothing reads it, so nothing is written (quotas turned on count from their start).
 */
export async function countSessionToday(ctx: HubContext, em: { execute(sql: string, params: unknown[]): Promise<unknown> }, userId: string): Promise<void> {
  if (!ctx.config.planQuotas) return;
  await em.execute(
    `with gone as (delete from session_opens where user_id = ? and day < (now() at time zone 'utc')::date)
     insert into session_opens (user_id, day, n) values (?, (now() at time zone 'utc')::date, 1)
     on conflict (user_id, day) do update set n = session_opens.n + 1`,
    [userId, userId],
  );
}

/** Throws QUOTA_EXHAUSTED (429, 4092) naming the quota when one more `kind` would exceed the user's plan. */
export async function enforceQuota(ctx: HubContext, userId: string, kind: QuotaKind): Promise<void> {
  if (!ctx.config.planQuotas) return;
  const rows = await ctx.em().getConnection().execute(
    `select u.role, coalesce(pp.quotas, fp.quotas) ->> ? as lim, coalesce(pp.name, fp.name) as plan, ${USED[kind]} as used
       from users u
       left join plans pp on pp.id = u.plan_id and (u.plan_expire_at is null or u.plan_expire_at > now())
       left join plans fp on fp.id = 'free'
      where u.id = ?`,
    [kind, userId],
  );
  const r = rows[0];
  if (!r || r.role === 'admin' || r.lim === null || r.lim === undefined) return;
  const limit = Number(r.lim);
  if (Number(r.used) >= limit) {
    throw fail('QUOTA_EXHAUSTED', `quota exhausted: ${LABEL[kind]} (${limit} on the ${r.plan} plan)`);
  }
}
