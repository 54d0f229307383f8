// The agent row. Writes go through this entity; the in-memory catalog
// (catalog.ts) reads rows with one SQL join so it also has the owner's name.
import { EntitySchema, BigIntType } from '@mikro-orm/postgresql';
import { DEFAULT_GUEST_MODE, type Mode } from './modes.js';

export type Scope = 'public' | 'private';
export type Pricing = 'free' | 'paid';
/** usageStatus: draft (saved, never offered), offline (not submitted or rejected), reviewing, online. */
export type UsageStatus = 'draft' | 'offline' | 'reviewing' | 'online';
export type ReviewStatus = 'pending' | 'approved' | 'rejected';

export class Agent {
  /** `<owner-slug>/<name-slug>[-n]`, fixed at creation. */
  id!: string;
  ownerId!: string;
  name!: string;
  displayName!: string;
  description = '';
  tags: string[] = [];
  category = 'other';
  scope: Scope = 'private';
  pricing: Pricing = 'free';
  usageStatus: UsageStatus = 'online';
  reviewStatus: ReviewStatus | null = null;
  rejectReason: string | null = null;
  enable = true;
  version = 1;
  hostId: string | null = null;
  engine: string | null = null;
  workDir = '';
  expectedInput = '';
  expectedOutput = '';
  /** The most permissive mode users other than the owner may use (agents/modes.ts). */
  maxGuestMode: Mode = DEFAULT_GUEST_MODE;
  /** Actual model reported by the engine after a run (usage.ts). */
  modelName: string | null = null;
  // Counters: written only by usage.ts, with SQL increments. favoriteCount is counted from agent_favorites (read-only here).
  usageCount = 0;
  sessionCount = 0;
  runs = 0;
  cost = 0;
  earn = 0;
  favoriteCount = 0;
  lastUsedAt: Date | null = null;
  submittedAt: Date | null = null;
  reviewedAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

const counter = { type: new BigIntType('number') };

export const AgentSchema = new EntitySchema<Agent>({
  class: Agent,
  tableName: 'agents',
  properties: {
    id: { type: 'string', primary: true },
    ownerId: { type: 'string' },
    name: { type: 'string' },
    displayName: { type: 'string' },
    description: { type: 'string' },
    tags: { type: 'json' },
    category: { type: 'string' },
    scope: { type: 'string' },
    pricing: { type: 'string' },
    usageStatus: { type: 'string' },
    reviewStatus: { type: 'string', nullable: true },
    rejectReason: { type: 'string', nullable: true },
    enable: { type: 'boolean' },
    version: { type: 'integer' },
    hostId: { type: 'string', nullable: true },
    engine: { type: 'string', nullable: true },
    workDir: { type: 'string' },
    expectedInput: { type: 'string' },
    expectedOutput: { type: 'string' },
    maxGuestMode: { type: 'string' },
    modelName: { type: 'string', nullable: true },
    usageCount: counter,
    sessionCount: counter,
    runs: counter,
    cost: counter,
    earn: counter,
    favoriteCount: { ...counter, persist: false },
    lastUsedAt: { type: 'Date', nullable: true },
    submittedAt: { type: 'Date', nullable: true },
    reviewedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const agentEntities = [AgentSchema];
