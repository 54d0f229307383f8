// Request schemas of the agent endpoints, compiled once at module load.
import Type from 'typebox';
import { compileBody, compileQuery, deepFreeze, literals, type Checker } from '../server/schema.js';
import { MODES } from './modes.js';
import { PAGE_MAX } from '../paging.js';

// Typed as the union of its literals (a mapped array would be typed `never`); the runtime schema is the plain anyOf.
const lit = <T extends string>(...v: T[]) => literals(v);
const Page = { page: Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 }), pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) };

/** Create and update share one field set (all optional); `model` and anything else undeclared is a 400. */
export const AgentWrite = compileBody(
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
      displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
      desc: Type.Optional(Type.String({ maxLength: 1000 })),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 30 }), { maxItems: 20 })),
      cat: Type.Optional(Type.String({ maxLength: 50 })),
      scope: Type.Optional(lit('public', 'private')),
      pay: Type.Optional(lit('free', 'paid')),
      step: Type.Optional(lit('draft', 'submit')),
      enable: Type.Optional(Type.Boolean()),
      hostId: Type.Optional(Type.String({ maxLength: 120 })),
      engine: Type.Optional(Type.String({ maxLength: 80, pattern: '^[A-Za-z0-9._-]*$' })),
      workDir: Type.Optional(Type.String({ maxLength: 500 })),
      expectedInput: Type.Optional(Type.String({ maxLength: 500 })),
      expectedOutput: Type.Optional(Type.String({ maxLength: 500 })),
      /** The most permissive mode other users may use (agents/modes.ts). */
      maxGuestMode: Type.Optional(lit(...MODES)),
    },
    { additionalProperties: false },
  ),
);
export type AgentWriteBody = ReturnType<typeof AgentWrite.parse>;

/**
 * Market queries repeat (the same few query strings from many callers), and
 * coercion + defaults cost ~100 µs: remember successful parses by raw input.
 * What is kept is shared between requests, so frozen.
 */
function memoQuery<T>(c: Checker<T>, max = 1000): Checker<T> {
  const memo = new Map<string, T>();
  return {
    schema: c.schema,
    byRaw: new Map(),
    parse(input, where) {
      const key = JSON.stringify(input);
      let v = memo.get(key);
      if (v === undefined) {
        v = deepFreeze(c.parse(input, where));
        if (memo.size >= max) memo.clear();
        memo.set(key, v);
      }
      return v;
    },
  };
}

export const MarketQuery = memoQuery(compileQuery(
  Type.Object(
    {
      q: Type.Optional(Type.String({ maxLength: 200 })),
      cat: Type.Optional(Type.String({ maxLength: 50 })),
      tag: Type.Optional(Type.String({ maxLength: 30 })),
      scope: Type.Optional(lit('public', 'private')),
      pricing: Type.Optional(lit('free', 'paid')),
      sort: Type.Optional(lit('usage', 'recent', 'favs', 'sessions')),
      ...Page,
      favOnly: Type.Optional(Type.Boolean()),
      sharedWithMe: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
));
export type MarketQueryT = ReturnType<typeof MarketQuery.parse>;

export const MineQuery = compileQuery(
  Type.Object(
    {
      keyword: Type.Optional(Type.String({ maxLength: 100 })),
      usageStatus: Type.Optional(Type.String({ maxLength: 100, pattern: '^(draft|offline|reviewing|online)(,(draft|offline|reviewing|online))*$' })),
      scope: Type.Optional(lit('public', 'private')),
      pay: Type.Optional(lit('free', 'paid')),
      engine: Type.Optional(Type.String({ maxLength: 80 })),
      hostId: Type.Optional(Type.String({ maxLength: 120 })),
      enable: Type.Optional(lit('true', 'false')),
      sort: Type.Optional(lit('usage', 'recent', 'sessions', 'runs', 'cost', 'earn')),
      ...Page,
    },
    { additionalProperties: false },
  ),
);
export type MineQueryT = ReturnType<typeof MineQuery.parse>;

export const AdminListQuery = compileQuery(
  Type.Object(
    {
      keyword: Type.Optional(Type.String({ maxLength: 100 })),
      reviewStatus: Type.Optional(lit('pending', 'approved', 'rejected')),
      usageStatus: Type.Optional(lit('draft', 'offline', 'reviewing', 'online')),
      scope: Type.Optional(lit('public', 'private')),
      ...Page,
    },
    { additionalProperties: false },
  ),
);
export type AdminListQueryT = ReturnType<typeof AdminListQuery.parse>;

export const PageQuery = compileQuery(Type.Object(Page, { additionalProperties: false }));

/** `version`: the version the administrator reviewed; a decision on an older one is a 409 (review.ts). A PostgreSQL integer. */
const ReviewedVersion = Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }));
export const RejectBody = compileBody(Type.Object({ reason: Type.String({ minLength: 1, maxLength: 1000 }), version: ReviewedVersion }, { additionalProperties: false }));
export const ApproveBody = compileBody(Type.Object({ version: ReviewedVersion }, { additionalProperties: false }));
export const DecideBody = compileBody(Type.Object({ accept: Type.Boolean() }, { additionalProperties: false }));
export const AiFillBody = compileBody(Type.Object({ text: Type.String({ minLength: 1, maxLength: 2000 }), configId: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })) }, { additionalProperties: false }));
