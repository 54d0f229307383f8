// A user's plan (read, and the administrator's overrides) and administrator
// token grants.
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { User } from '../accounts/entities.js';
import { userView } from '../accounts/views.js';
import { applyBalanceChange } from './ledger.js';
import { grantDuePlanTokens } from './plan-grants.js';
import { FREE_PLAN_ID, planView } from './catalogue.js';
import { Plan } from './entities.js';

/** One grant-token `qty` is this many tokens. */
export const GRANT_UNIT = 1000;

export class Subscriptions {
  constructor(private readonly ctx: HubContext) {}

  /** The plan in effect: a paid plan while unexpired (null expiry = no end), else the free plan. */
  async myPlan(userId: string) {
    const em = this.ctx.em();
    const u = await em.findOne(User, { id: userId });
    if (!u) throw fail('NOT_FOUND', 'user not found');
    const active = !!u.planId && (u.planExpireAt === null || u.planExpireAt.getTime() > Date.now());
    const effective = (active && (await em.findOne(Plan, { id: u.planId! }))) || (await em.findOne(Plan, { id: FREE_PLAN_ID }));
    return {
      planId: effective ? effective.id : FREE_PLAN_ID,
      plan: effective ? planView(effective) : null,
      active: active && effective?.id === u.planId,
      expireAt: active && u.planExpireAt ? u.planExpireAt.getTime() : null,
      /** What is stored, even when expired. */
      subscribedPlanId: u.planId,
      subscribedExpireAt: u.planExpireAt ? u.planExpireAt.getTime() : null,
    };
  }

  /**
   * Omitted fields keep their value; planId null clears the plan (and its expiry); planExpireAt null = never expires.
   * An assignment grants the plan's monthly tokens every period while it lasts (plan_periods null). The row is
   * read under its lock: requests racing each other (a retried PATCH) each saw the plan not yet set and
   * started it anew, each with its own anchor, so each was granted the first period.
   */
  async setPlan(userId: string, b: { planId?: string | null; planExpireAt?: number | null }) {
    const em = this.ctx.em();
    if (b.planId !== undefined && b.planId !== null && !(await em.findOne(Plan, { id: b.planId }))) throw fail('VALIDATION', 'body/planId: unknown plan');
    if (b.planId === null && b.planExpireAt !== undefined && b.planExpireAt !== null) throw fail('VALIDATION', 'body/planExpireAt: cannot set an expiry without a plan');
    await em.transactional(async (tx) => {
      const [u] = await tx.execute(`select plan_id, plan_expire_at from users where id = ? for update`, [userId]);
      if (!u) throw fail('NOT_FOUND', 'user not found');
      const current = u.plan_id as string | null;
      const wasActive = !!current && (u.plan_expire_at === null || new Date(u.plan_expire_at).getTime() > Date.now());
      if (b.planId === null) {
        await tx.execute(`update users set plan_id = null, plan_expire_at = null, plan_periods = null, updated_at = now() where id = ?`, [userId]);
        return;
      }
      const planId = b.planId ?? current;
      if (b.planExpireAt !== undefined && !planId) throw fail('VALIDATION', 'body/planExpireAt: the user has no plan');
      if (!planId) return;
      const startsAnew = b.planId !== undefined && (b.planId !== current || !wasActive);
      const expire = b.planExpireAt === undefined ? undefined : b.planExpireAt === null ? null : new Date(b.planExpireAt);
      // An assigned plan is a plan like a bought one: a plan that starts anew starts its monthly-token periods.
      await tx.execute(
        `update users set plan_id = ?, plan_expire_at = case when ? then plan_expire_at else ?::timestamptz end,
            plan_periods = case when ? then null else plan_periods end,
            plan_anchor_at = case when ? then now() else coalesce(plan_anchor_at, now()) end, updated_at = now()
          where id = ?`,
        [planId, expire === undefined, expire ?? null, b.planId !== undefined || expire !== undefined, startsAnew, userId],
      );
      await grantDuePlanTokens(tx, userId);
    });
    return userView(await this.ctx.em().fork().findOneOrFail(User, { id: userId })); // the balance may have moved
  }

  async grantTokens(adminId: string, userId: string, qty: number) {
    const em = this.ctx.em();
    const change = await applyBalanceChange(em, userId, qty * GRANT_UNIT, 'grant', adminId, `granted by an administrator (${qty} × ${GRANT_UNIT})`);
    return { userId, qty, tokens: change.amount, balance: change.balance, entryId: change.entryId };
  }
}
