// Schemas of the billing views (statement.ts, catalogue.ts), for the OpenAPI document's response `data`.
import Type, { type TSchema } from 'typebox';
import { literals } from '../server/schema.js';
import { CYCLES, LEDGER_TYPES, ORDER_STATUSES, ORDER_TYPES, REDEEM_STATUSES } from './entities.js';
import { PAY_CHANNELS } from './catalogue.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const Cycles = ['month', 'quarter', 'year'] as const;

export const Balance = Type.Object({
  balance: Type.Number(),
  totalIncome: Type.Number(),
  totalSpent: Type.Number(),
  unit: Type.Literal('token'),
  updatedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const LedgerPage = Type.Object({
  items: Type.Array(Type.Object({
    id: Type.String(),
    amount: Type.Number(),
    type: Type.String(),
    ref: Nullable(Type.String()),
    note: Nullable(Type.String()),
    balanceAfter: Type.Number(),
    createdAt: Type.String({ format: 'date-time' }),
  })),
  total: Type.Integer(),
  page: Type.Integer(),
  pageSize: Type.Integer(),
  hasMore: Type.Boolean(),
});

const Price = Type.Object({ tokens: Type.Number(), cents: Type.Number() });

export const Plan = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  currency: Type.String(),
  prices: Type.Object(Object.fromEntries(Cycles.map((c) => [c, Price]))),
  quotas: Type.Record(Type.String(), Type.Number()),
  free: Type.Boolean(),
});

export const Plans = Type.Object({
  items: Type.Array(Plan),
  total: Type.Integer(),
  cycles: Type.Object(Object.fromEntries(Cycles.map((c) => [c, Type.Integer({ description: 'days' })]))),
});

export const TokenPacks = Type.Object({
  items: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    tokens: Type.Number(),
    priceCents: Type.Integer(),
    currency: Type.String(),
    default: Type.Boolean(),
  })),
  total: Type.Integer(),
  payMethods: Type.Array(Type.String()),
});

export const Products = Type.Object({
  items: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    priceTokens: Type.Number(),
    stock: Type.Union([Type.Integer(), Type.Null()]),
    available: Type.Boolean(),
  })),
  total: Type.Integer(),
});

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);
const Ms = Type.Union([Type.Integer({ description: 'ms since the epoch' }), Type.Null()]);
const PageOf = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer(), hasMore: Type.Boolean() });

export const Trends = Type.Object({
  range: Type.String(),
  type: Type.Union([literals(LEDGER_TYPES), Type.Null()]),
  points: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }), income: Type.Number(), spent: Type.Number(), net: Type.Number(), entries: Type.Integer() })),
  totals: Type.Object({ income: Type.Number(), spent: Type.Number(), net: Type.Number() }),
});

export const MyPlan = Type.Object({
  planId: Type.String({ description: 'the effective plan (the free plan when none is active)' }),
  plan: Type.Union([Plan, Type.Null()]),
  active: Type.Boolean(),
  expireAt: Ms,
  subscribedPlanId: Nullable(Type.String()),
  subscribedExpireAt: Ms,
});

export const Granted = Type.Object({ userId: Type.String(), qty: Type.Integer(), tokens: Type.Number(), balance: Type.Number(), entryId: Type.String() });

export const Order = Type.Object({
  id: Type.String(),
  type: literals(ORDER_TYPES),
  status: literals(ORDER_STATUSES),
  itemId: Type.String(),
  itemName: Type.String(),
  cycle: Type.Union([literals(CYCLES), Type.Null()]),
  qty: Type.Integer(),
  tokens: Type.Number(),
  amountCents: Type.Integer(),
  currency: Type.String(),
  payMethod: Type.Union([literals(PAY_CHANNELS), Type.Literal('token')]),
  paymentRef: Nullable(Type.String()),
  payUrl: Nullable(Type.String({ description: 'where to pay, while pending (a page-pay URL, or the sandbox page)' })),
  codeUrl: Nullable(Type.String({ description: 'a QR-code payload (WeChat), while pending' })),
  expiresAt: NullableTime,
  paidAt: NullableTime,
  createdAt: Time,
  updatedAt: Time,
});
export const OrderPage = PageOf(Order);

const RedeemFields = {
  id: Type.String(),
  productId: Type.String(),
  productName: Type.String(),
  qty: Type.Integer(),
  tokens: Type.Number(),
  status: literals(REDEEM_STATUSES),
  read: Type.Boolean(),
  rejectReason: Nullable(Type.String()),
  cardCount: Type.Integer(),
  deliveredAt: NullableTime,
  rejectedAt: NullableTime,
  createdAt: Time,
  updatedAt: Time,
};
export const Redemption = Type.Object(RedeemFields);
export const RedemptionPage = PageOf(Redemption);
/** `userName`: the account's name, for the administrator fulfilling it (null only if the account is gone). */
export const AdminRedemption = Type.Object({ ...RedeemFields, userId: Type.String(), userName: Nullable(Type.String()) });
export const AdminRedemptionPage = PageOf(AdminRedemption);
export const Cards = Type.Object({ id: Type.String(), cards: Type.Array(Type.Object({ no: Nullable(Type.String()), pwd: Nullable(Type.String()) })) });
export const RedeemsSummary = Type.Object({ total: Type.Integer(), pending: Type.Integer(), delivered: Type.Integer(), rejected: Type.Integer(), tokensSpent: Type.Number(), newToday: Type.Integer() });
