// The store's redemption requests: a user spends tokens on a product and an
// administrator fulfils the request by delivering cards, or rejects it (the
// tokens and the stock come back). Status: pending → delivered | rejected.
import { LockMode } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import { offsetOf, pageOf } from '../paging.js';
import { applyBalanceChange } from './ledger.js';
import { rangeStart, type Range } from './statement.js';
import { CardBox, type Card } from './cards.js';
import { Product, Redemption, type RedeemStatus } from './entities.js';

/** Checks the optional second factor before cards are shown; throws when it is required and wrong. */
export type StepUpCheck = (userId: string, verifyToken: string | undefined) => Promise<void>;

export function redeemView(r: Redemption) {
  return {
    id: r.id,
    productId: r.productId,
    productName: r.productName,
    qty: r.qty,
    tokens: r.tokens,
    status: r.status,
    read: r.read,
    rejectReason: r.rejectReason,
    cardCount: r.cardCount,
    deliveredAt: r.deliveredAt ? r.deliveredAt.toISOString() : null,
    rejectedAt: r.rejectedAt ? r.rejectedAt.toISOString() : null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

const adminView = (r: Redemption, names: Map<string, string>) => ({ ...redeemView(r), userId: r.userId, userName: names.get(r.userId) ?? null });

export interface RedeemQuery {
  status?: RedeemStatus;
  read?: boolean;
  range: Range;
  page: number;
  pageSize: number;
}

export class RedeemService {
  private readonly box: CardBox;
  constructor(
    private readonly ctx: HubContext,
    private readonly stepUp: StepUpCheck,
  ) {
    this.box = new CardBox(ctx.secrets.vaultKey);
  }

  async redeem(userId: string, productId: string, qty: number) {
    const em = this.ctx.em();
    const r = await em.transactional(async (tx) => {
      const p = await tx.findOne(Product, { id: productId, enabled: true }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!p) throw fail('NOT_FOUND', 'product not found');
      if (p.stock !== null) {
        if (p.stock < qty) throw fail('CONFLICT', `only ${p.stock} left in stock`);
        p.stock -= qty;
      }
      const r = Object.assign(new Redemption(), {
        id: newId('rdm'), userId, productId: p.id, productName: p.name, qty, tokens: p.priceTokens * qty, status: 'pending', read: true,
      } satisfies Partial<Redemption>);
      tx.persist(r);
      await tx.flush();
      await applyBalanceChange(tx, userId, -r.tokens, 'redeem', r.id, `${p.name} × ${qty}`);
      return r;
    });
    return redeemView(r);
  }

  private async query(base: Record<string, unknown>, q: RedeemQuery & { userId?: string }) {
    const where: Record<string, unknown> = { ...base };
    if (q.status) where.status = q.status;
    if (q.read !== undefined) where.read = q.read;
    if (q.userId) where.userId = q.userId;
    const since = rangeStart(q.range);
    if (since) where.createdAt = { $gte: since };
    return this.ctx.em().findAndCount(Redemption, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.pageSize, offset: offsetOf(q.page, q.pageSize) });
  }

  async listMine(userId: string, q: RedeemQuery) {
    const [rows, total] = await this.query({ userId }, q);
    return pageOf(rows.map(redeemView), total, q.page, q.pageSize);
  }

  private async mine(userId: string, id: string) {
    const r = await this.ctx.em().findOne(Redemption, { id, userId });
    if (!r) throw fail('NOT_FOUND', 'redemption not found');
    return r;
  }

  async getMine(userId: string, id: string) {
    return redeemView(await this.mine(userId, id));
  }

  async markRead(userId: string, id: string) {
    const em = this.ctx.em();
    const r = await em.findOne(Redemption, { id, userId });
    if (!r) throw fail('NOT_FOUND', 'redemption not found');
    if (!r.read) {
      r.read = true;
      await em.flush();
    }
    return redeemView(r);
  }

  async revealMine(userId: string, id: string, verifyToken: string | undefined) {
    const r = await this.mine(userId, id);
    return this.reveal(r, userId, verifyToken);
  }

  private async reveal(r: Redemption, viewerId: string, verifyToken: string | undefined) {
    if (r.status !== 'delivered' || !r.cardsEnc) throw fail('CONFLICT', `redemption is ${r.status}; cards exist only once delivered`);
    await this.stepUp(viewerId, verifyToken);
    const cards = this.box.open(r.cardsEnc, r.id);
    return { id: r.id, cards: cards.map((c) => ({ no: c.no ?? null, pwd: c.pwd ?? null })) };
  }

  // ---- administrator side ----

  async summary() {
    const rows = await this.ctx.em().getConnection().execute(
      `select count(*)::int as total,
              count(*) filter (where status = 'pending')::int as pending,
              count(*) filter (where status = 'delivered')::int as delivered,
              count(*) filter (where status = 'rejected')::int as rejected,
              coalesce(sum(tokens) filter (where status <> 'rejected'), 0) as tokens,
              count(*) filter (where created_at >= now() - interval '1 day')::int as new_today
         from redemptions`,
    );
    const r = rows[0];
    return { total: r.total, pending: r.pending, delivered: r.delivered, rejected: r.rejected, tokensSpent: Number(r.tokens), newToday: r.new_today };
  }

  async list(q: RedeemQuery & { userId?: string }) {
    const [rows, total] = await this.query({}, q);
    const names = await this.userNames(rows);
    return pageOf(rows.map((r) => adminView(r, names)), total, q.page, q.pageSize);
  }

  /** The names of the accounts these redemptions belong to, in one query. */
  private async userNames(rows: Redemption[]): Promise<Map<string, string>> {
    const ids = [...new Set(rows.map((r) => r.userId))];
    if (ids.length === 0) return new Map();
    const found = await this.ctx.em().getConnection().execute<Array<{ id: string; name: string }>>(`select id, name from users where id in (${ids.map(() => '?').join(', ')})`, ids);
    return new Map(found.map((u) => [u.id, u.name]));
  }

  private async adminViewOf(r: Redemption) {
    return adminView(r, await this.userNames([r]));
  }

  private async any(id: string) {
    const r = await this.ctx.em().findOne(Redemption, { id });
    if (!r) throw fail('NOT_FOUND', 'redemption not found');
    return r;
  }

  async get(id: string) {
    return this.adminViewOf(await this.any(id));
  }

  async deliver(id: string, cards: Card[]) {
    if (cards.some((c) => !c.no && !c.pwd)) throw fail('VALIDATION', 'body/cards: each card needs a number or a password');
    const em = this.ctx.em();
    const r = await em.transactional(async (tx) => {
      const r = await tx.findOne(Redemption, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!r) throw fail('NOT_FOUND', 'redemption not found');
      if (r.status !== 'pending') throw fail('CONFLICT', `redemption is already ${r.status}`);
      Object.assign(r, { status: 'delivered', cardsEnc: this.box.seal(cards, r.id), cardCount: cards.length, deliveredAt: new Date(), read: false });
      return r;
    });
    return this.adminViewOf(r);
  }

  async reject(id: string, reason: string) {
    const em = this.ctx.em();
    const r = await em.transactional(async (tx) => {
      const r = await tx.findOne(Redemption, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!r) throw fail('NOT_FOUND', 'redemption not found');
      if (r.status !== 'pending') throw fail('CONFLICT', `redemption is already ${r.status}`);
      Object.assign(r, { status: 'rejected', rejectReason: reason, rejectedAt: new Date(), read: false });
      await tx.flush();
      await tx.execute(`update products set stock = stock + ? where id = ? and stock is not null`, [r.qty, r.productId]);
      await applyBalanceChange(tx, r.userId, r.tokens, 'refund', r.id, `refund: ${r.productName} × ${r.qty}`);
      return r;
    });
    return this.adminViewOf(r);
  }

  async revealAny(adminId: string, id: string, verifyToken: string | undefined) {
    return this.reveal(await this.any(id), adminId, verifyToken);
  }
}
