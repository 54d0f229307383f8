// Request schemas of the billing routes, compiled once at module load.
import Type, { type TSchemaOptions, type TUnsafe } from 'typebox';
import { compileBody, compileQuery } from '../server/schema.js';
import { CYCLES, LEDGER_TYPES, ORDER_STATUSES, ORDER_TYPES, REDEEM_STATUSES } from './entities.js';
import { PAY_CHANNELS } from './catalogue.js';
import { RANGES, TREND_RANGES } from './statement.js';
import { PAGE_MAX } from '../paging.js';

/** A union of string literals whose static type is the literal union (a mapped TLiteral array is typed `never`); at run time the plain anyOf. */
export function oneOf<const T extends readonly string[]>(values: T, opts: TSchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Union(values.map((v) => Type.Literal(v)), opts) as unknown as TUnsafe<T[number]>;
}

const closed = { additionalProperties: false } as const;
const page = Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 });
const pageSize = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
const id = Type.String({ minLength: 1, maxLength: 128 });

export const LedgerQuery = compileQuery(Type.Object({ type: Type.Optional(oneOf(LEDGER_TYPES)), range: oneOf(RANGES, { default: 'all' }), page, pageSize }, closed));
export const TrendsQuery = compileQuery(Type.Object({ type: Type.Optional(oneOf(LEDGER_TYPES)), range: oneOf(TREND_RANGES, { default: '30d' }) }, closed));
export const OrdersQuery = compileQuery(Type.Object({ type: Type.Optional(oneOf(ORDER_TYPES)), status: Type.Optional(oneOf(ORDER_STATUSES)), page, pageSize }, closed));
export const RedeemsQuery = compileQuery(
  Type.Object({ status: Type.Optional(oneOf(REDEEM_STATUSES)), read: Type.Optional(Type.Boolean()), range: oneOf(RANGES, { default: 'all' }), page, pageSize }, closed),
);
export const AdminRedeemsQuery = compileQuery(
  Type.Object(
    { status: Type.Optional(oneOf(REDEEM_STATUSES)), read: Type.Optional(Type.Boolean()), userId: Type.Optional(id), range: oneOf(RANGES, { default: 'all' }), page, pageSize },
    closed,
  ),
);

export const TokenPackOrder = compileBody(
  Type.Object({ packId: Type.Optional(id), qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 99 })), payMethod: oneOf(PAY_CHANNELS) }, closed),
);
export const PlanOrder = compileBody(Type.Object({ planId: id, cycle: oneOf(CYCLES), payMethod: oneOf([...PAY_CHANNELS, 'token'] as const) }, closed));
export const ConfirmPayment = compileBody(Type.Object({ paymentRef: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) }, closed));
export const RedeemBody = compileBody(Type.Object({ productId: id, qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })) }, closed));
export const CardsBody = compileBody(Type.Object({ verifyToken: Type.Optional(Type.String({ maxLength: 64 })) }, closed));

const card = Type.Object({ no: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })), pwd: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, closed);
export const DeliverBody = compileBody(Type.Object({ cards: Type.Array(card, { minItems: 1, maxItems: 100 }) }, closed));
export const RejectBody = compileBody(Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, closed));

export const UserPlanBody = compileBody(
  Type.Object(
    {
      planId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
      // Up to 9999-12-31T23:59:59.999Z: PostgreSQL's timestamptz refuses a later year.
      planExpireAt: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 253_402_300_799_999 }), Type.Null()])),
    },
    closed,
  ),
);
export const GrantBody = compileBody(Type.Union([Type.Null(), Type.Object({ qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, closed)]));
