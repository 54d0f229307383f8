import { EntitySchema, BigIntType } from '@mikro-orm/postgresql';

export const LEDGER_TYPES = ['grant', 'purchase', 'plan', 'spend', 'redeem', 'refund', 'earn'] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];
export const CYCLES = ['month', 'quarter', 'year'] as const;
export type Cycle = (typeof CYCLES)[number];
export const ORDER_TYPES = ['token_pack', 'plan'] as const;
export const ORDER_STATUSES = ['pending', 'paid', 'cancelled', 'expired'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const REDEEM_STATUSES = ['pending', 'delivered', 'rejected'] as const;
export type RedeemStatus = (typeof REDEEM_STATUSES)[number];

/** One balance change. users.balance moves only together with one of these (ledger.ts). */
export class LedgerEntry {
  id!: string;
  userId!: string;
  amount!: number;
  type!: LedgerType;
  ref: string | null = null;
  note: string | null = null;
  balanceAfter!: number;
  createdAt: Date = new Date();
}

export type Price = { tokens: number; cents: number };

export class Plan {
  id!: string;
  name!: string;
  description = '';
  currency!: string;
  prices!: Record<Cycle, Price>;
  quotas!: Record<string, number>;
  sort = 0;
}

export class TokenPack {
  id!: string;
  name!: string;
  tokens!: number;
  priceCents!: number;
  currency!: string;
  isDefault = false;
  sort = 0;
}

export class Order {
  id!: string;
  userId!: string;
  type!: 'token_pack' | 'plan';
  status: OrderStatus = 'pending';
  itemId!: string;
  itemName!: string;
  cycle: Cycle | null = null;
  qty = 1;
  /** token_pack: tokens credited when paid; plan paid with tokens: tokens charged. */
  tokens = 0;
  amountCents = 0;
  currency!: string;
  payMethod!: string;
  paymentRef: string | null = null;
  /** Which payment provider serves the order (alipay, wechat, sandbox); only its notifications settle it. */
  payProvider: string | null = null;
  /** What the payer opens (a signed page-pay URL) or scans (WeChat Native `code_url`). */
  payUrl: string | null = null;
  codeUrl: string | null = null;
  /** The provider's own transaction number, from its notification. */
  providerTradeNo: string | null = null;
  paidAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export class Product {
  id!: string;
  name!: string;
  description = '';
  priceTokens!: number;
  /** null = unlimited. */
  stock: number | null = null;
  enabled = true;
  sort = 0;
}

export class Redemption {
  id!: string;
  userId!: string;
  productId!: string;
  productName!: string;
  qty!: number;
  tokens!: number;
  status: RedeemStatus = 'pending';
  /** Whether the owner has seen the latest status change. */
  read = true;
  rejectReason: string | null = null;
  /** AES-256-GCM of the delivered cards (cards.ts); never returned except through the reveal endpoints. */
  cardsEnc: string | null = null;
  cardCount = 0;
  deliveredAt: Date | null = null;
  rejectedAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

const bigint = () => ({ type: new BigIntType('number') });

export const LedgerEntrySchema = new EntitySchema<LedgerEntry>({
  class: LedgerEntry,
  tableName: 'ledger_entries',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    amount: bigint(),
    type: { type: 'string' },
    ref: { type: 'string', nullable: true },
    note: { type: 'string', nullable: true },
    balanceAfter: bigint(),
    createdAt: { type: 'Date' },
  },
});

export const PlanSchema = new EntitySchema<Plan>({
  class: Plan,
  tableName: 'plans',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    description: { type: 'string' },
    currency: { type: 'string' },
    prices: { type: 'json' },
    quotas: { type: 'json' },
    sort: { type: 'integer' },
  },
});

export const TokenPackSchema = new EntitySchema<TokenPack>({
  class: TokenPack,
  tableName: 'token_packs',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    tokens: bigint(),
    priceCents: { type: 'integer' },
    currency: { type: 'string' },
    isDefault: { type: 'boolean' },
    sort: { type: 'integer' },
  },
});

export const OrderSchema = new EntitySchema<Order>({
  class: Order,
  tableName: 'orders',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    type: { type: 'string' },
    status: { type: 'string' },
    itemId: { type: 'string' },
    itemName: { type: 'string' },
    cycle: { type: 'string', nullable: true },
    qty: { type: 'integer' },
    tokens: bigint(),
    amountCents: { type: 'integer' },
    currency: { type: 'string' },
    payMethod: { type: 'string' },
    paymentRef: { type: 'string', nullable: true },
    payProvider: { type: 'string', nullable: true },
    payUrl: { type: 'text', nullable: true },
    codeUrl: { type: 'text', nullable: true },
    providerTradeNo: { type: 'string', nullable: true },
    paidAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const ProductSchema = new EntitySchema<Product>({
  class: Product,
  tableName: 'products',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    description: { type: 'string' },
    priceTokens: bigint(),
    stock: { type: 'integer', nullable: true },
    enabled: { type: 'boolean' },
    sort: { type: 'integer' },
  },
});

export const RedemptionSchema = new EntitySchema<Redemption>({
  class: Redemption,
  tableName: 'redemptions',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    productId: { type: 'string' },
    productName: { type: 'string' },
    qty: { type: 'integer' },
    tokens: bigint(),
    status: { type: 'string' },
    read: { type: 'boolean' },
    rejectReason: { type: 'string', nullable: true },
    cardsEnc: { type: 'text', nullable: true },
    cardCount: { type: 'integer' },
    deliveredAt: { type: 'Date', nullable: true },
    rejectedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const billingEntities = [LedgerEntrySchema, PlanSchema, TokenPackSchema, OrderSchema, ProductSchema, RedemptionSchema];
