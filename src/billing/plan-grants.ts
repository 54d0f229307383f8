// A paid plan's monthly tokens (`quotas.monthlyTokens`): granted when the plan
// starts and at the start of every 30-day period after that, counted from
// users.plan_anchor_at (set when a plan starts, kept when it is extended), for
// as many periods as were paid for (users.plan_periods; null: every period while
// the plan lasts — an administrator's assignment): a period is due while the term's
// grants are fewer than the periods paid, so periods paid late in a term (a channel
// month renewing a quarter paid from the balance, at its third period) are granted
// from the current one (compared by number, they were periods the term had passed).
// Exactly once per period however many nodes sweep at once: the grant is
// keyed (user, anchor, period) in plan_grants, and only the statement whose
// insert wins moves the balance and writes the ledger entry, in the same
// statement.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';

const PERIOD_SECONDS = 30 * 24 * 3600;

// The current period of every active paid plan with monthly tokens ($1: one user, or null for all).
// now() is the transaction's start: an anchor set by a later-started one must not read as period −1.
const PERIOD = `greatest(0, floor(extract(epoch from (now() - u.plan_anchor_at)) / ${PERIOD_SECONDS}))::int`;
const DUE = `
  select u.id as uid, u.plan_id, u.plan_anchor_at as anchor, ${PERIOD} as period, (p.quotas ->> 'monthlyTokens')::bigint as tokens
    from users u join plans p on p.id = u.plan_id
   where u.plan_anchor_at is not null and u.plan_id <> 'free'
     and (u.plan_expire_at is null or u.plan_expire_at > now())
     and (u.plan_periods is null or (select count(*) from plan_grants g where g.user_id = u.id and g.anchor_at = u.plan_anchor_at) < u.plan_periods)
     and coalesce((p.quotas ->> 'monthlyTokens')::bigint, 0) > 0`;

/** Periods of monthly tokens a cycle pays for: whole 30-day periods through a channel, none from the balance. */
export const periodsPaid = (days: number, fromBalance: boolean): number => (fromBalance ? 0 : Math.floor((days * 86_400) / PERIOD_SECONDS));
export { PERIOD_SECONDS };

/** Grants the user's current period if it is not granted yet; joins the caller's transaction. Returns the tokens granted. */
export async function grantDuePlanTokens(em: EntityManager, userId: string): Promise<number> {
  const rows = await em.execute(
    `with due as (${DUE} and u.id = ?),
     ins as (
       insert into plan_grants (user_id, anchor_at, period, plan_id, tokens)
       select uid, anchor, period, plan_id, tokens from due
       on conflict do nothing
       returning user_id, period, plan_id, tokens),
     upd as (
       update users u set balance = u.balance + ins.tokens, updated_at = now()
         from ins where u.id = ins.user_id
       returning u.id, u.balance, ins.tokens, ins.plan_id, ins.period)
     insert into ledger_entries (id, user_id, amount, type, ref, note, balance_after)
     select 'led_' || substr(md5(random()::text || clock_timestamp()::text || upd.id), 1, 16), upd.id, upd.tokens, 'plan',
            'plan-grant:' || upd.plan_id || ':' || upd.period, 'monthly tokens of the ' || upd.plan_id || ' plan (period ' || (upd.period + 1) || ')', upd.balance
       from upd
     returning amount`,
    [userId],
  );
  return rows.length ? Number(rows[0].amount) : 0;
}

/** Every node sweeps now and then; users whose current period is not granted yet get it, one statement each. */
export class PlanGrantSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly ctx: HubContext) {}

  start(): void {
    const every = this.ctx.config.planGrantSweepMs;
    if (every <= 0) return;
    this.timer = setInterval(() => void this.sweepOnce(), every);
    this.timer.unref();
    void this.sweepOnce();
  }

  /** One sweep (a sweep already running is joined, not doubled). */
  sweepOnce(): Promise<void> {
    this.running ??= this.sweep().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweep(): Promise<void> {
    try {
      const em = this.ctx.em();
      const due = await em.execute(
        `select d.uid from (${DUE}) d
          where not exists (select 1 from plan_grants g where g.user_id = d.uid and g.anchor_at = d.anchor and g.period = d.period)
          order by d.uid limit 1000`,
      );
      for (const r of due) {
        const tokens = await grantDuePlanTokens(this.ctx.em(), r.uid);
        if (tokens) this.ctx.log.info('plan tokens granted', { userId: r.uid, tokens });
      }
    } catch (e) {
      this.ctx.log.warn('plan grant sweep failed; retried on the next sweep', { err: e });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
