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

  /** Omitted fields keep their value; planId null clears the plan (and its expiry); planExpireAt null = never expires. */
  async setPlan(userId: string, b: { planId?: string | null; planExpireAt?: number | null }) {
    const em = this.ctx.em();
    const u = await em.findOne(User, { id: userId });
    if (!u) throw fail('NOT_FOUND', 'user not found');
    if (b.planId !== undefined && b.planId !== null && !(await em.findOne(Plan, { id: b.planId }))) throw fail('VALIDATION', 'body/planId: unknown plan');
    const wasActive = !!u.planId && (u.planExpireAt === null || u.planExpireAt.getTime() > Date.now());
    const startsAnew = b.planId !== undefined && b.planId !== null && (b.planId !== u.planId || !wasActive);
    if (b.planId === null) {
      if (b.planExpireAt !== undefined && b.planExpireAt !== null) throw fail('VALIDATION', 'body/planExpireAt: cannot set an expiry without a plan');
      u.planId = null;
      u.planExpireAt = null;
    } else {
      if (b.planId !== undefined) u.planId = b.planId;
      if (b.planExpireAt !== undefined) {
        if (!u.planId) throw fail('VALIDATION', 'body/planExpireAt: the user has no plan');
        u.planExpireAt = b.planExpireAt === null ? null : new Date(b.planExpireAt);
      }
    }
    await em.transactional(async (tx) => {
      await tx.flush();
      // An assigned plan is a plan like a bought one: a plan that starts anew starts its monthly-token periods.
      await tx.execute(
        `update users set plan_anchor_at = case when ? then now() else coalesce(plan_anchor_at, now()) end where id = ? and plan_id is not null`,
        [startsAnew, userId],
      );
      await grantDuePlanTokens(tx, userId);
    });
    return userView(await this.ctx.em().findOneOrFail(User, { id: userId })); // the balance may have moved
  }

  async grantTokens(adminId: string, userId: string, qty: number) {
    const em = this.ctx.em();
    const change = await applyBalanceChange(em, userId, qty * GRANT_UNIT, 'grant', adminId, `granted by an administrator (${qty} × ${GRANT_UNIT})`);
    return { userId, qty, tokens: change.amount, balance: change.balance, entryId: change.entryId };
  }
}
