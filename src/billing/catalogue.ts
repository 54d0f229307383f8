// The seeded catalogue: plans, token packs, store products. Read-only through
// the API (seeded by the migration), so there is nothing to invalidate.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { Plan, Product, TokenPack, type Cycle } from './entities.js';

/** Third-party payment channels accepted for orders (wire names). */
export const PAY_CHANNELS = ['alipay', 'wechat'] as const;
export type PayChannel = (typeof PAY_CHANNELS)[number];

/** The plan everybody has when no paid plan is active. */
export const FREE_PLAN_ID = 'free';
export const CYCLE_DAYS: Record<Cycle, number> = { month: 30, quarter: 90, year: 365 };

export function planView(p: Plan) {
  return { id: p.id, name: p.name, description: p.description, currency: p.currency, prices: p.prices, quotas: p.quotas, free: p.id === FREE_PLAN_ID };
}

export function packView(p: TokenPack) {
  return { id: p.id, name: p.name, tokens: p.tokens, priceCents: p.priceCents, currency: p.currency, default: p.isDefault };
}

export function productView(p: Product) {
  return { id: p.id, name: p.name, description: p.description, priceTokens: p.priceTokens, stock: p.stock, available: p.enabled && (p.stock === null || p.stock > 0) };
}

export class Catalogue {
  constructor(private readonly ctx: HubContext) {}

  async plans() {
    const rows = await this.ctx.em().find(Plan, {}, { orderBy: { sort: 'asc', id: 'asc' } });
    return { items: rows.map(planView), total: rows.length, cycles: CYCLE_DAYS };
  }

  async plan(em: EntityManager, id: string): Promise<Plan> {
    const p = await em.findOne(Plan, { id });
    if (!p) throw fail('NOT_FOUND', 'plan not found');
    return p;
  }

  async tokenPacks() {
    const rows = await this.ctx.em().find(TokenPack, {}, { orderBy: { sort: 'asc', id: 'asc' } });
    return { items: rows.map(packView), total: rows.length, payMethods: PAY_CHANNELS };
  }

  async pack(em: EntityManager, id: string | undefined): Promise<TokenPack> {
    const p = id ? await em.findOne(TokenPack, { id }) : await em.findOne(TokenPack, { isDefault: true });
    if (!p) throw fail('NOT_FOUND', 'token pack not found');
    return p;
  }

  async products() {
    const rows = await this.ctx.em().find(Product, { enabled: true }, { orderBy: { sort: 'asc', id: 'asc' } });
    return { items: rows.map(productView), total: rows.length };
  }
}
