// Orders for token packs and plans. Paying with `token` settles at once from
// the balance; a payment channel leaves the order `pending` with a payment
// reference (the provider's out_trade_no) and what the payer opens or scans,
// until the provider's verified notification settles it (settle), or the
// administrator confirms it by hand (confirmPayment). A pending order expires
// after ORDER_TTL_MINUTES, applied when orders are read.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { CHANNEL_ORDERS_PER_WINDOW, PENDING_ORDERS_PER_ACCOUNT, refuseOverCap } from '../account-caps.js';
import { newId, randomId } from '../ids.js';
import { offsetOf, pageOf } from '../paging.js';
import { applyBalanceChange } from './ledger.js';
import { grantDuePlanTokens, periodsPaid, PERIOD_SECONDS } from './plan-grants.js';
import { CYCLE_DAYS, FREE_PLAN_ID, type Catalogue, type PayChannel } from './catalogue.js';
import { Order, type Cycle, type OrderStatus } from './entities.js';
import { NotifyRefused, type PaymentProvider, type Payments } from './payments/index.js';
import type { Limiter } from '../ratelimit/limiter.js';

/** How long a channel order waits for its payment; the providers are told the same deadline. */
export const ORDER_TTL_MINUTES = 30;
const TTL_MS = ORDER_TTL_MINUTES * 60_000;
/** Statuses a payment may still settle: an expired order paid at the deadline still delivers (the money was received). */
const SETTLEABLE = `status in ('pending', 'expired')`;

/** Marks pending orders past their deadline `expired` (all, or the user's, or one, or one of the user's). */
export async function expireStale(em: EntityManager, scope: { userId?: string; id?: string } = {}): Promise<void> {
  const cond = (scope.id ? ' and id = ?' : '') + (scope.userId ? ' and user_id = ?' : '');
  const args = [scope.id, scope.userId].filter((v): v is string => v !== undefined);
  await em.execute(`update orders set status = 'expired', updated_at = now() where status = 'pending' and created_at < now() - interval '${ORDER_TTL_MINUTES} minutes'${cond}`, args);
}

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
    // What the client needs to pay, while the order can still be paid.
    payUrl: o.status === 'pending' ? o.payUrl : null,
    codeUrl: o.status === 'pending' ? o.codeUrl : null,
    expiresAt: o.payProvider ? new Date(o.createdAt.getTime() + TTL_MS).toISOString() : null,
    paidAt: o.paidAt ? o.paidAt.toISOString() : null,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

/**
 * Sets the user's plan for one cycle; extends from the current expiry when the
 * same plan is still active. A plan that starts anew starts its monthly-token
 * periods (plan_anchor_at) and its first period is granted here, in the
 * caller's transaction. The cycle pays for its whole 30-day periods of monthly
 * tokens when paid through a channel, for none when paid from the balance
 * (plan_periods; plan-grants.ts); extending a plan whose periods were not counted
 * (an administrator's) counts those its current term holds first.
 */
export async function extendPlan(em: EntityManager, userId: string, planId: string, cycle: Cycle, fromBalance: boolean): Promise<void> {
  const paid = periodsPaid(CYCLE_DAYS[cycle], fromBalance);
  const same = `plan_id = ? and (plan_expire_at is null or plan_expire_at > now()) and plan_anchor_at is not null`;
  await em.execute(
    `update users set plan_id = ?, updated_at = now(),
        plan_periods = case
          when ${same} then case
            when plan_periods is not null then plan_periods + ?
            when plan_expire_at is null then null
            else ceil(extract(epoch from (plan_expire_at - plan_anchor_at)) / ${PERIOD_SECONDS})::int + ? end
          else ? end,
        plan_anchor_at = case when ${same} then plan_anchor_at else now() end,
        plan_expire_at = case
          when plan_id = ? and plan_expire_at is null then null
          when plan_id = ? and plan_expire_at > now() then plan_expire_at + (? * interval '1 day')
          else now() + (? * interval '1 day') end
      where id = ?`,
    [planId, planId, paid, paid, paid, planId, planId, planId, CYCLE_DAYS[cycle], CYCLE_DAYS[cycle], userId],
  );
  await grantDuePlanTokens(em, userId);
}

export class OrderService {
  constructor(
    private readonly ctx: HubContext,
    private readonly catalogue: Catalogue,
    private readonly payments: Payments,
    /** The hub's rate limiter (shared across nodes with Redis): provider calls an account makes. */
    private readonly limiter: Limiter,
  ) {}

  async buyTokenPack(userId: string, b: { packId?: string; qty?: number; payMethod: PayChannel }) {
    const provider = this.payments.forChannel(b.payMethod); // 503 before anything is stored
    const em = this.ctx.em();
    const pack = await this.catalogue.pack(em, b.packId);
    const qty = b.qty ?? 1;
    const o = Object.assign(new Order(), {
      id: newId('ord'), userId, type: 'token_pack', status: 'pending', itemId: pack.id, itemName: pack.name, qty,
      tokens: pack.tokens * qty, amountCents: pack.priceCents * qty, currency: pack.currency, payMethod: b.payMethod,
    } satisfies Partial<Order>);
    return this.startPayment(em, o, provider);
  }

  /**
   * Stores the pending order, then asks the provider how to pay (a signed URL, a code to scan) and keeps
   * that with it; an order the provider refused is removed again.
   */
  private async startPayment(em: EntityManager, o: Order, provider: PaymentProvider) {
    // Before the provider is called: each order made a signed call with the merchant's credentials. Those
    // still payable are bounded, and so are all made in an order's lifetime, cancelled or not (cancelling
    // made room at once, so create-then-cancel called the provider without bound). Counted and stored under
    // the account's lock: requests sent at once all read one count, and 60 made 60 past a cap of 20.
    o.paymentRef = 'pay_' + randomId(20);
    o.payProvider = provider.name;
    await em.transactional(async (tx) => {
      await tx.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`orders:${o.userId}`]);
      const [c] = await tx.execute(
        `select count(*) filter (where status = 'pending')::int as open, count(*)::int as made
           from orders where user_id = ? and pay_provider is not null and created_at > now() - (? * interval '1 millisecond')`,
        [o.userId, TTL_MS],
      );
      refuseOverCap(Number(c?.open ?? 0), PENDING_ORDERS_PER_ACCOUNT, 'unpaid orders', 'pay or cancel one first, or let one expire');
      if (Number(c?.made ?? 0) >= CHANNEL_ORDERS_PER_WINDOW) throw this.tooMany(TTL_MS);
      tx.persist(o);
    });
    // The calls themselves, the provider's refusals included (a refused order is not kept to be counted).
    const calls = await this.limiter.hit([{ key: `rl:pay-calls:${o.userId}`, limit: CHANNEL_ORDERS_PER_WINDOW, windowMs: TTL_MS }]);
    let start: Awaited<ReturnType<PaymentProvider['start']>>;
    try {
      if (!calls.allowed) throw this.tooMany(calls.states[0]?.resetMs ?? TTL_MS);
      start = await provider.start({
        orderId: o.id, paymentRef: o.paymentRef, amountCents: o.amountCents, currency: o.currency,
        subject: o.type === 'token_pack' ? `${o.itemName} × ${o.qty}` : `${o.itemName} (${o.cycle})`, expiresAt: new Date(o.createdAt.getTime() + TTL_MS),
      });
    } catch (e) {
      await em.execute(`delete from orders where id = ? and status = 'pending'`, [o.id]);
      throw e;
    }
    o.payUrl = start.payUrl ?? null;
    o.codeUrl = start.codeUrl ?? null;
    await em.execute(`update orders set pay_url = ?, code_url = ?, updated_at = now() where id = ?`, [o.payUrl, o.codeUrl, o.id]);
    return orderView(o);
  }

  private tooMany(resetMs: number) {
    return fail('RATE_LIMITED', `an account makes at most ${CHANNEL_ORDERS_PER_WINDOW} payment orders in ${ORDER_TTL_MINUTES} minutes; pay one of them or try again later`, { 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) });
  }

  async buyPlan(userId: string, b: { planId: string; cycle: Cycle; payMethod: PayChannel | 'token' }) {
    const em = this.ctx.em();
    const provider = b.payMethod === 'token' ? undefined : this.payments.forChannel(b.payMethod);
    const plan = await this.catalogue.plan(em, b.planId);
    if (plan.id === FREE_PLAN_ID) throw fail('VALIDATION', 'the free plan needs no order');
    const price = plan.prices[b.cycle];
    const o = Object.assign(new Order(), {
      id: newId('ord'), userId, type: 'plan', status: 'pending' as OrderStatus, itemId: plan.id, itemName: plan.name, cycle: b.cycle, qty: 1,
      tokens: 0, amountCents: price.cents, currency: plan.currency, payMethod: b.payMethod,
    } satisfies Partial<Order>);
    if (provider) return this.startPayment(em, o, provider);
    // Paid from the balance: the order, the ledger entry and the plan change commit together.
    o.tokens = price.tokens;
    o.amountCents = 0;
    o.status = 'paid';
    o.paidAt = new Date();
    await em.transactional(async (tx) => {
      tx.persist(o);
      await tx.flush();
      await applyBalanceChange(tx, userId, -price.tokens, 'plan', o.id, `${plan.name} (${b.cycle})`);
      await extendPlan(tx, userId, plan.id, b.cycle, true);
    });
    return orderView(o);
  }

  async list(userId: string, q: { type?: string; status?: OrderStatus; page: number; pageSize: number }) {
    await expireStale(this.ctx.em(), { userId });
    const where: Record<string, unknown> = { userId };
    if (q.type) where.type = q.type;
    if (q.status) where.status = q.status;
    const [rows, total] = await this.ctx.em().findAndCount(Order, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.pageSize, offset: offsetOf(q.page, q.pageSize) });
    return pageOf(rows.map(orderView), total, q.page, q.pageSize);
  }

  async get(userId: string, id: string) {
    await expireStale(this.ctx.em(), { id, userId }); // only the caller's: another's read writes nothing
    const o = await this.ctx.em().findOne(Order, { id, userId });
    if (!o) throw fail('NOT_FOUND', 'order not found');
    return orderView(o);
  }

  async cancel(userId: string, id: string) {
    const em = this.ctx.em();
    const rows = await em.execute(
      `update orders set status = 'cancelled', updated_at = now() where id = ? and user_id = ? and status = 'pending' and created_at >= now() - interval '${ORDER_TTL_MINUTES} minutes' returning id`,
      [id, userId],
    );
    if (!rows.length) {
      await this.get(userId, id); // 404 when it is not the caller's
      throw fail('CONFLICT', 'only a pending order can be cancelled');
    }
    return this.get(userId, id);
  }

  /**
   * The administrator's manual override: a pending (or expired) channel order was paid.
   * Delivers through the same conditional update as a provider's notification.
   */
  async confirmPayment(id: string, paymentRef?: string) {
    const em = this.ctx.em();
    await expireStale(em, { id });
    const o = await em.findOne(Order, { id });
    if (!o) throw fail('NOT_FOUND', 'order not found');
    if (paymentRef !== undefined && paymentRef !== o.paymentRef) throw fail('VALIDATION', 'paymentRef does not match the order');
    if (!(await this.deliver(id, null))) {
      const now = await this.ctx.em().findOneOrFail(Order, { id });
      throw fail('CONFLICT', `order is ${now.status}, not pending`);
    }
    return orderView(await this.ctx.em().findOneOrFail(Order, { id }));
  }

  /**
   * A provider's verified notification of a payment. Idempotent: a replayed or
   * concurrent notification finds the order already paid and delivers nothing.
   * Returns whether this call delivered. Throws NotifyRefused when the payment
   * does not belong to one of this provider's orders or its amount differs.
   */
  async settle(providerName: string, n: { paymentRef: string; amountCents: number; tradeNo: string }): Promise<boolean> {
    const o = await this.ctx.em().findOne(Order, { paymentRef: n.paymentRef, payProvider: providerName });
    if (!o) throw new NotifyRefused('no order of this channel has that out_trade_no');
    if (o.amountCents !== n.amountCents) {
      this.ctx.log.error('payment amount differs from the order', { orderId: o.id, provider: providerName, paid: n.amountCents, due: o.amountCents });
      throw new NotifyRefused('paid amount differs from the order');
    }
    const delivered = await this.deliver(o.id, n.tradeNo.slice(0, 128));
    if (!delivered && o.status === 'cancelled') this.ctx.log.warn('payment for a cancelled order: refund by hand', { orderId: o.id, provider: providerName, tradeNo: n.tradeNo });
    return delivered;
  }

  /**
   * Marks the order paid and delivers what it bought, in one transaction. The
   * conditional update is the idempotency guard: of concurrent callers, one
   * changes the row; the others wait on its lock and then match nothing.
   */
  private async deliver(id: string, tradeNo: string | null): Promise<boolean> {
    return this.ctx.em().transactional(async (tx) => {
      const rows = await tx.execute(
        `update orders set status = 'paid', paid_at = now(), updated_at = now(), provider_trade_no = coalesce(?, provider_trade_no)
          where id = ? and ${SETTLEABLE} returning user_id, type, tokens, item_id, item_name, qty, cycle`,
        [tradeNo, id],
      );
      if (!rows.length) return false;
      const r = rows[0];
      if (r.type === 'token_pack') await applyBalanceChange(tx, r.user_id, Number(r.tokens), 'purchase', id, `${r.item_name} × ${r.qty}`);
      else await extendPlan(tx, r.user_id, r.item_id, r.cycle as Cycle, false);
      return true;
    });
  }
}
