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

const Ms = Type.Union([Type.Integer({ description: 'ms since the epoch' }), Type.Null()]);
const Time = Type.String({ format: 'date-time' });

export const Overview = Type.Object({
  total: Type.Integer(),
  byStatus: Type.Object({ draft: Type.Integer(), offline: Type.Integer(), reviewing: Type.Integer(), online: Type.Integer() }),
  public: Type.Integer(),
  private: Type.Integer(),
  enabled: Type.Integer(),
  approved: Type.Integer(),
  rejected: Type.Integer(),
});
export const StatsSummary = Type.Object({
  agents: Type.Integer(), usageCount: Type.Integer(), sessionCount: Type.Integer(), runs: Type.Integer(), cost: Type.Number(), earn: Type.Number(), favoriteCount: Type.Integer(), lastUsedAt: Ms,
});
export const AgentStats = Type.Object({
  id: Type.String(),
  usageStatus: Base.usageStatus,
  reviewStatus: Type.Union([lit(['pending', 'approved', 'rejected']), Type.Null()], { description: 'null: never submitted (private agents)' }),
  version: Type.Integer(),
  usageCount: Type.Integer(),
  sessionCount: Type.Integer(),
  runs: Type.Integer(),
  cost: Type.Number(),
  earn: Type.Number(),
  favoriteCount: Type.Integer(),
  sharedWith: Type.Integer(),
  lastUsedAt: Ms,
});
/** ai-fill: suggested listing fields, from the rules or from one of the caller's models. */
export const AiFill = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  desc: Type.String(),
  tags: Type.Array(Type.String()),
  cat: Type.String(),
  source: lit(['rules', 'model']),
  reason: Type.Optional(Type.String({ description: 'why the model gave nothing (source: rules)' })),
  configId: Type.Optional(Type.String({ description: 'the model configuration used (source: model)' })),
});

const Kind = lit(['link', 'invite']);
const TokenFields = { agentId: Type.String(), kind: Kind, token: Type.String(), url: Type.String({ description: 'the invitation path on this hub' }), createdAt: Time };
export const ShareToken = Type.Object(TokenFields);
export const Invites = Type.Object({
  ...TokenFields,
  items: Type.Array(Type.Object({ userId: Type.String(), name: Type.String(), via: Kind, joinedAt: Time })),
  total: Type.Integer(),
});
export const MemberRemoved = Type.Object({ agentId: Type.String(), userId: Type.String(), removed: Type.Literal(true) });
export const Invitation = Type.Object({ token: Type.String(), kind: Kind, agent: MarketAgent, ownerName: Type.String(), isOwner: Type.Boolean(), joined: Type.Boolean() });
export const Decided = Type.Object({ agentId: Type.String(), accepted: Type.Boolean(), sharedWithMe: Type.Boolean() });
export const ReviewSummary = Type.Object({
  total: Type.Integer(), pending: Type.Integer(), approved: Type.Integer(), rejected: Type.Integer(), online: Type.Integer(), public: Type.Integer(), private: Type.Integer(),
});
