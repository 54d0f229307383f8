// Time passing for a user's plan, without waiting: its anchor, expiry and granted periods move back
// `days`, then one sweep of the monthly-token grants runs (what every node does on its timer).
import type { TestHub } from './hub.js';
import { PlanGrantSweeper } from '../../src/billing/plan-grants.js';

export async function planDaysPass(t: TestHub, userId: string, days: number): Promise<void> {
  await t.hub.ctx.em().execute(`update plan_grants set anchor_at = anchor_at - (? * interval '1 day') where user_id = ?`, [days, userId]);
  await t.hub.ctx.em().execute(
    `update users set plan_anchor_at = plan_anchor_at - (? * interval '1 day'), plan_expire_at = plan_expire_at - (? * interval '1 day') where id = ?`,
    [days, days, userId],
  );
  await new PlanGrantSweeper(t.hub.ctx).sweepOnce();
}
