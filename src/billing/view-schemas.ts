// Schemas of the billing views (statement.ts, catalogue.ts), for the OpenAPI document's response `data`.
import Type from 'typebox';

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

export const Plans = Type.Object({
  items: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    currency: Type.String(),
    prices: Type.Object(Object.fromEntries(Cycles.map((c) => [c, Price]))),
    quotas: Type.Record(Type.String(), Type.Number()),
    free: Type.Boolean(),
  })),
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
