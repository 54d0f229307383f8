// Pure rules of agents: publication state machine, what counts as a
// substantive change, visibility and usability, workDir and id slugs.
// No I/O here, so each rule lives in exactly one place.
import type { Agent, Pricing, ReviewStatus, Scope, UsageStatus } from './entities.js';

export type Step = 'draft' | 'submit';

export interface PubState {
  scope: Scope;
  usageStatus: UsageStatus;
  reviewStatus: ReviewStatus | null;
  rejectReason: string | null;
  version: number;
  submittedAt: Date | null;
}

/** State of a new agent. Submitting a public agent starts its review (version 1). */
export function initialState(scope: Scope, step: Step | undefined, now: Date): PubState {
  const base = { scope, rejectReason: null, version: 1, submittedAt: null };
  if (step === 'draft') return { ...base, usageStatus: 'draft', reviewStatus: null };
  if (scope === 'private') return { ...base, usageStatus: 'online', reviewStatus: null };
  if (step === 'submit') return { ...base, usageStatus: 'reviewing', reviewStatus: 'pending', submittedAt: now };
  return { ...base, usageStatus: 'offline', reviewStatus: null };
}

/** `enable` defaults to true except for drafts. */
export const defaultEnable = (step: Step | undefined) => step !== 'draft';

/** Fields whose change alters what users see or run; `enable` and `step` are not among them. */
export const SUBSTANTIVE = ['name', 'displayName', 'description', 'tags', 'category', 'pricing', 'hostId', 'engine', 'workDir', 'expectedInput', 'expectedOutput'] as const;

export function isSubstantive(before: Pick<Agent, (typeof SUBSTANTIVE)[number]>, after: Pick<Agent, (typeof SUBSTANTIVE)[number]>): boolean {
  return SUBSTANTIVE.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

/** State after a PATCH, given the state before, the scope after, the step and whether content changed. */
export function nextState(cur: PubState, scope: Scope, step: Step | undefined, substantive: boolean, now: Date): PubState {
  const s: PubState = { ...cur, scope };
  if (step === 'submit') {
    s.version = cur.version + 1;
    s.rejectReason = null;
    if (scope === 'public') return { ...s, usageStatus: 'reviewing', reviewStatus: 'pending', submittedAt: now };
    return { ...s, usageStatus: 'online', reviewStatus: null, submittedAt: null };
  }
  if (step === 'draft') return { ...s, usageStatus: 'draft', reviewStatus: null, submittedAt: null };
  if (scope !== cur.scope) {
    // Leaving public drops any review; entering public needs a submit to be listed.
    if (cur.usageStatus === 'draft') return { ...s, reviewStatus: null, rejectReason: null, submittedAt: null };
    if (scope === 'private') return { ...s, usageStatus: 'online', reviewStatus: null, rejectReason: null, submittedAt: null };
    return { ...s, usageStatus: 'offline', reviewStatus: null, rejectReason: null, submittedAt: null };
  }
  if (scope === 'public' && cur.reviewStatus === 'approved' && substantive) {
    return { ...s, usageStatus: 'reviewing', reviewStatus: 'pending', version: cur.version + 1, submittedAt: now };
  }
  // Under review: a new version, so a decision taken on the one the administrator saw is refused (review.ts).
  if (scope === 'public' && cur.reviewStatus === 'pending' && substantive) return { ...s, version: cur.version + 1 };
  return s;
}

/** Private agents are always free. */
export const effectivePricing = (scope: Scope, pay: Pricing): Pricing => (scope === 'private' ? 'free' : pay);

/** Listed in the public market for everyone, anonymous callers included. */
export const isListed = (a: Pick<Agent, 'scope' | 'reviewStatus' | 'usageStatus' | 'enable'>) =>
  a.scope === 'public' && a.reviewStatus === 'approved' && a.usageStatus === 'online' && a.enable;

export interface Viewer {
  userId?: string;
  shared?: ReadonlySet<string>;
}

/** In market lists: listed, or the caller's own or shared non-draft agents. */
export function inMarket(a: Pick<Agent, 'id' | 'ownerId' | 'scope' | 'reviewStatus' | 'usageStatus' | 'enable'>, v: Viewer): boolean {
  if (isListed(a)) return true;
  if (!v.userId || a.usageStatus === 'draft') return false;
  return a.ownerId === v.userId || !!v.shared?.has(a.id);
}

/** Readable by id: the market rule, plus the owner's own drafts. */
export const canRead = (a: Pick<Agent, 'id' | 'ownerId' | 'scope' | 'reviewStatus' | 'usageStatus' | 'enable'>, v: Viewer) =>
  inMarket(a, v) || (!!v.userId && a.ownerId === v.userId);

/** Why a readable agent cannot run a session now, or null when it can. */
export function unusableReason(a: Pick<Agent, 'id' | 'ownerId' | 'scope' | 'reviewStatus' | 'usageStatus' | 'enable' | 'hostId' | 'engine'>, userId: string): string | null {
  if (!a.enable) return 'agent is disabled';
  if (!a.hostId || !a.engine) return 'agent has no host and engine';
  if (a.ownerId === userId || isListed(a)) return null;
  if (a.usageStatus !== 'online') return `agent is ${a.usageStatus}`;
  return null;
}

/** workDir: relative, no `..` segment, no drive letter or home shorthand. */
export function checkWorkDir(w: string): string | null {
  if (w === '') return null;
  if (/^[/\\~]/.test(w) || /^[A-Za-z]:/.test(w)) return 'workDir must be a relative path';
  if (w.split(/[/\\]+/).some((seg) => seg === '..')) return 'workDir must not contain ".."';
  if (w.includes('\0')) return 'workDir must not contain NUL';
  return null;
}

/** Lowercase ASCII slug; empty when nothing usable is left. */
export function slug(s: string, max: number): string {
  return s
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '');
}

/** The owner part an account's agent ids start with, before it is made unique among accounts (at most 40 characters). */
export function prefixStem(ownerName: string, ownerId: string): string {
  return slug(ownerName, 40) || `u-${slug(ownerId, 40).slice(-8)}`;
}

/** The id stem `<prefix>/<name>` (at most 100 characters, leaving room for a `-n` suffix within 120). */
export function idStem(prefix: string, agentName: string): string {
  return `${prefix}/${slug(agentName, 59) || 'agent'}`;
}
