// Schemas of the agent views (views.ts), for the OpenAPI document's response `data`.
import { literals } from '../server/schema.js';
import Type, { type TSchema } from 'typebox';
import { MODES } from './modes.js';

const lit = literals;

const Base = {
  id: Type.String(),
  name: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  category: Type.String(),
  scope: lit(['public', 'private']),
  pricing: lit(['free', 'paid']),
  usageStatus: lit(['draft', 'offline', 'reviewing', 'online']),
  reviewStatus: Type.Optional(lit(['pending', 'approved', 'rejected'])),
  engine: Type.Optional(Type.String()),
  modelName: Type.Optional(Type.String()),
  expectedInput: Type.String(),
  expectedOutput: Type.String(),
  ownerName: Type.String(),
  usageCount: Type.Integer(),
  sessionCount: Type.Integer(),
  runs: Type.Integer(),
  cost: Type.Number(),
  earn: Type.Number(),
  favoriteCount: Type.Integer(),
  enable: Type.Boolean(),
  version: Type.Integer(),
  recent: Type.Integer({ description: 'last update, ms since the epoch' }),
  createdAt: Type.String({ format: 'date-time' }),
  favorited: Type.Boolean(),
  sharedWithMe: Type.Boolean(),
};

/** marketView: what any caller allowed to read the agent sees. */
export const MarketAgent = Type.Object(Base);

/** ownerView / manageView: the owner's and administrators' view. */
export const OwnerAgent = Type.Object({
  ...Base,
  hostId: Type.String(),
  hostName: Type.String(),
  hostUp: Type.Boolean(),
  workDir: Type.String(),
  maxGuestMode: lit(MODES),
  rejectReason: Type.Optional(Type.String()),
  lastUsedAt: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});

/** The spec's page object (paging.ts) around `item`. */
export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer(), hasMore: Type.Boolean() });

export const Facets = Type.Object({
  cats: Type.Array(Type.Object({ key: Type.String(), label: Type.String(), count: Type.Integer() })),
  tags: Type.Array(Type.Object({ key: Type.String(), count: Type.Integer() })),
});

/** review.ts: the owner view plus who submitted it and when it was submitted and reviewed. */
export const ReviewAgent = Type.Object({
  ...OwnerAgent.properties,
  ownerId: Type.String(),
  submittedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  reviewedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const Favorite = Type.Object({ agentId: Type.String(), favorited: Type.Boolean(), favoriteCount: Type.Integer() });

// ---------- owner tools: stats, sharing, ai-fill (manage.ts, sharing.ts, aifill.ts) ----------
export const AgentStats = Type.Object({
  id: Type.String(),
  usageStatus: Base.usageStatus,
  reviewStatus: Type.Union([lit(['pending', 'approved', 'rejected']), Type.Null()]),
  version: Type.Integer(),
  usageCount: Type.Integer(),
  sessionCount: Type.Integer(),
  runs: Type.Integer(),
  cost: Type.Number(),
  earn: Type.Number(),
  favoriteCount: Type.Integer(),
  sharedWith: Type.Integer({ description: 'members who joined through the share link or an invitation' }),
  lastUsedAt: Type.Union([Type.Integer({ description: 'ms since the epoch' }), Type.Null()]),
});

/** A share link or invitation token; `url` is the API path that resolves it. */
export const ShareToken = Type.Object({
  agentId: Type.String(),
  kind: lit(['link', 'invite']),
  token: Type.String(),
  url: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

export const Invites = Type.Object({
  ...ShareToken.properties,
  items: Type.Array(Type.Object({ userId: Type.String(), name: Type.String(), via: lit(['link', 'invite']), joinedAt: Type.String({ format: 'date-time' }) })),
  total: Type.Integer(),
});

export const MemberRemoved = Type.Object({ agentId: Type.String(), userId: Type.String(), removed: Type.Literal(true) });

export const AiFillDraft = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  desc: Type.String(),
  tags: Type.Array(Type.String()),
  cat: Type.String(),
  source: lit(['model', 'rules']),
  configId: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});
