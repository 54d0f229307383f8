// Orders for token packs and plans. Paying with `token` settles at once from
// the balance; a payment channel leaves the order `pending` with a payment
// reference until the payment is confirmed (confirmPayment: the administrator
// endpoint stands in for a provider's notification).
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId, randomId } from '../ids.js';
import { offsetOf, pageOf } from '../paging.js';
import { applyBalanceChange } from './ledger.js';
import { grantDuePlanTokens } from './plan-grants.js';
import { CYCLE_DAYS, FREE_PLAN_ID, type Catalogue, type PayChannel } from './catalogue.js';
import { Order, type Cycle, type OrderStatus } from './entities.js';

export function orderView(o: Order) {
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    itemId: o.itemId,
    itemName: o.itemName,
    cycle: o.cycle,
    qty: o.qty,
    tokens: o.tokens,
    amountCents: o.amountCents,
    currency: o.currency,
    payMethod: o.payMethod,
    paymentRef: o.paymentRef,
    paidAt: o.paidAt ? o.paidAt.toISOString() : null,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

/**
 * Sets the user's plan for one cycle; extends from the current expiry when the
 * same plan is still active. A plan that starts anew starts its monthly-token
 * periods (plan_anchor_at) and its first period is granted here, in the
 * caller's transaction.
 */
export async function extendPlan(em: EntityManager, userId: string, planId: string, cycle: Cycle): Promise<void> {
  await em.execute(
    `update users set plan_id = ?, updated_at = now(),
        plan_anchor_at = case
          when plan_id = ? and (plan_expire_at is null or plan_expire_at > now()) and plan_anchor_at is not null then plan_anchor_at
          else now() end,
        plan_expire_at = case
          when plan_id = ? and plan_expire_at is null then null
          when plan_id = ? and plan_expire_at > now() then plan_expire_at + (? * interval '1 day')
          else now() + (? * interval '1 day') end
      where id = ?`,
    [planId, planId, planId, planId, CYCLE_DAYS[cycle], CYCLE_DAYS[cycle], userId],
  );
  await grantDuePlanTokens(em, userId);
}

export class OrderService {
  constructor(
    private readonly ctx: HubContext,
    private readonly catalogue: Catalogue,
  ) {}

  async buyTokenPack(userId: string, b: { packId?: string; qty?: number; payMethod: PayChannel }) {
    const em = this.ctx.em();
    const pack = await this.catalogue.pack(em, b.packId);
    const qty = b.qty ?? 1;
    const o = Object.assign(new Order(), {
      id: newId('ord'), userId, type: 'token_pack', status: 'pending', itemId: pack.id, itemName: pack.name, qty,
      tokens: pack.tokens * qty, amountCents: pack.priceCents * qty, currency: pack.currency, payMethod: b.payMethod, paymentRef: 'pay_' + randomId(20),
    } satisfies Partial<Order>);
    await em.persist(o).flush();
    return orderView(o);
  }

  async buyPlan(userId: string, b: { planId: string; cycle: Cycle; payMethod: PayChannel | 'token' }) {
    const em = this.ctx.em();
    const plan = await this.catalogue.plan(em, b.planId);
    if (plan.id === FREE_PLAN_ID) throw fail('VALIDATION', 'the free plan needs no order');
    const price = plan.prices[b.cycle];
    const o = Object.assign(new Order(), {
      id: newId('ord'), userId, type: 'plan', status: 'pending' as OrderStatus, itemId: plan.id, itemName: plan.name, cycle: b.cycle, qty: 1,
      tokens: 0, amountCents: price.cents, currency: plan.currency, payMethod: b.payMethod,
    } satisfies Partial<Order>);
    if (b.payMethod !== 'token') {
      o.paymentRef = 'pay_' + randomId(20);
      await em.persist(o).flush();
      return orderView(o);
    }
    // Paid from the balance: the order, the ledger entry and the plan change commit together.
    o.tokens = price.tokens;
    o.amountCents = 0;
    o.status = 'paid';
    o.paidAt = new Date();
    await em.transactional(async (tx) => {
      tx.persist(o);
      await tx.flush();
      await applyBalanceChange(tx, userId, -price.tokens, 'plan', o.id, `${plan.name} (${b.cycle})`);
      await extendPlan(tx, userId, plan.id, b.cycle);
    });
    return orderView(o);
  }

  async list(userId: string, q: { type?: string; status?: OrderStatus; page: number; pageSize: number }) {
    const where: Record<string, unknown> = { userId };
    if (q.type) where.type = q.type;
    if (q.status) where.status = q.status;
    const [rows, total] = await this.ctx.em().findAndCount(Order, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.pageSize, offset: offsetOf(q.page, q.pageSize) });
    return pageOf(rows.map(orderView), total, q.page, q.pageSize);
  }

  async get(userId: string, id: string) {
    const o = await this.ctx.em().findOne(Order, { id, userId });
    if (!o) throw fail('NOT_FOUND', 'order not found');
    return orderView(o);
  }

  async cancel(userId: string, id: string) {
    const em = this.ctx.em();
    const rows = await em.execute(`update orders set status = 'cancelled', updated_at = now() where id = ? and user_id = ? and status = 'pending' returning id`, [id, userId]);
    if (!rows.length) {
      await this.get(userId, id); // 404 when it is not the caller's
      throw fail('CONFLICT', 'only a pending order can be cancelled');
    }
    return this.get(userId, id);
  }

  /** A pending channel order was paid: mark it paid and deliver what it bought, in one transaction. */
  async confirmPayment(id: string, paymentRef?: string) {
    const em = this.ctx.em();
    await em.transactional(async (tx) => {
      const o = await tx.findOne(Order, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!o) throw fail('NOT_FOUND', 'order not found');
      if (o.status !== 'pending') throw fail('CONFLICT', `order is ${o.status}, not pending`);
      if (paymentRef !== undefined && paymentRef !== o.paymentRef) throw fail('VALIDATION', 'paymentRef does not match the order');
      o.status = 'paid';
      o.paidAt = new Date();
      await tx.flush();
      if (o.type === 'token_pack') await applyBalanceChange(tx, o.userId, o.tokens, 'purchase', o.id, `${o.itemName} × ${o.qty}`);
      else await extendPlan(tx, o.userId, o.itemId, o.cycle!);
    });
    const o = await this.ctx.em().findOneOrFail(Order, { id });
    return orderView(o);
  }
}
