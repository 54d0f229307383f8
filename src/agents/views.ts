// The agent object as the spec shows it. The market view is built once per
// row version (catalog.ts) and only the per-caller flags are added per request.
import type { Agent } from './entities.js';
import type { UserState } from './catalog.js';
import { envelopeBytes } from '../server/reply.js';

export type BaseView = ReturnType<typeof baseView>;

export function baseView(a: Agent, ownerName: string) {
  return viewOf(a, ownerName, {});
}

/**
 * The view's fields, then `more`. One literal with the spread last: every view of the same fields
 * shares one hidden class with fast properties. `{ ...view, favorited }` gives each object a class of
 * its own on Node 20 (about 700 bytes more per cached row), and Object.assign onto `{}` makes a
 * dictionary of 27 fields (larger still): test/hidden-classes.test.ts.
 */
function viewOf<M extends object>(a: Agent, ownerName: string, more: M) {
  return {
    id: a.id,
    name: a.name,
    displayName: a.displayName,
    description: a.description,
    tags: a.tags,
    category: a.category,
    scope: a.scope,
    pricing: a.pricing,
    usageStatus: a.usageStatus,
    ...(a.reviewStatus ? { reviewStatus: a.reviewStatus } : {}),
    ...(a.engine ? { engine: a.engine } : {}),
    ...(a.modelName ? { modelName: a.modelName } : {}),
    expectedInput: a.expectedInput,
    expectedOutput: a.expectedOutput,
    ownerName,
    usageCount: a.usageCount,
    sessionCount: a.sessionCount,
    runs: a.runs,
    cost: a.cost,
    earn: a.earn,
    favoriteCount: a.favoriteCount,
    enable: a.enable,
    version: a.version,
    recent: a.updatedAt.getTime(),
    createdAt: a.createdAt.toISOString(),
    ...more,
  };
}

export type MarketView = BaseView & { favorited: boolean; sharedWithMe: boolean };

/** The view with both per-caller flags false: built once per row version and shared by most callers. */
export function plainView(a: Agent, ownerName: string): MarketView {
  return viewOf(a, ownerName, { favorited: false, sharedWithMe: false });
}

/** What any caller allowed to read the agent sees; a new object only when a flag is set. */
/**
 * The market view serialized, memoised on the entry per pair of caller flags: a signed-in page is
 * the cached JSON of its entries joined, so a request serializes nothing (entries are per row version).
 */
export function marketJson(e: { a: Agent; base: BaseView; plain: MarketView; json?: string[] }, st: UserState | undefined): string {
  const fav = !!st?.favs.has(e.a.id);
  const shared = !!st?.shared.has(e.a.id);
  const k = (fav ? 1 : 0) | (shared ? 2 : 0);
  const memo = (e.json ??= []);
  return (memo[k] ??= JSON.stringify(k ? { ...e.base, favorited: fav, sharedWithMe: shared } : e.plain));
}

/** marketJson as the whole 200 envelope in bytes, memoised the same way (one agent's answer). */
export function marketBytes(e: { a: Agent; base: BaseView; plain: MarketView; json?: string[]; bytes?: Buffer[] }, st: UserState | undefined): Buffer {
  const k = (st?.favs.has(e.a.id) ? 1 : 0) | (st?.shared.has(e.a.id) ? 2 : 0);
  const memo = (e.bytes ??= []);
  return (memo[k] ??= envelopeBytes(marketJson(e, st)));
}

export function marketView(e: { a: Agent; base: BaseView; plain: MarketView }, st: UserState | undefined): MarketView {
  const favorited = !!st?.favs.has(e.a.id);
  const sharedWithMe = !!st?.shared.has(e.a.id);
  return favorited || sharedWithMe ? { ...e.base, favorited, sharedWithMe } : e.plain;
}

export interface HostInfo {
  name: string;
  up: boolean;
}

/** Owner and administrator view: adds the binding and the review outcome. */
export function ownerView(e: { a: Agent; base: BaseView; plain: MarketView }, st: UserState | undefined, host: HostInfo | undefined) {
  const a = e.a;
  return {
    ...marketView(e, st),
    hostId: a.hostId ?? '',
    hostName: host?.name ?? '',
    hostUp: host?.up ?? false,
    workDir: a.workDir,
    maxGuestMode: a.maxGuestMode,
    ...(a.rejectReason ? { rejectReason: a.rejectReason } : {}),
  };
}

/** `GET /agents/{id}/manage`: the owner view plus lastUsedAt (ms or null). */
export function manageView(e: { a: Agent; base: BaseView; plain: MarketView }, st: UserState | undefined, host: HostInfo | undefined) {
  return { ...ownerView(e, st, host), lastUsedAt: e.a.lastUsedAt ? e.a.lastUsedAt.getTime() : null };
}
