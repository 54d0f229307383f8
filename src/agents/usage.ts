// What the sessions domain calls. Small and stable on purpose:
//
//   const agent = await resolveUsableAgent(ctx, userId, agentId); // before opening a session (a value when the catalog knows it now)
//   await em.transactional(async (em) => { …; await recordSessionOpened(em, agent.id, userId); });
//   notifyAgentChanged(ctx.bus, agent.id);                         // after commit
//
// The record* functions run inside the caller's transaction (they take its
// EntityManager) and only touch counters; publishing the change is the
// caller's job after commit, so the market cache never sees uncommitted data.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import type { Bus } from '../bus/bus.js';
import { publishObj } from '../bus/bus.js';
import { fail, HubError } from '../errors.js';
import { AGENTS_TOPIC, catalogOn, type AgentCatalog, type AgentEvent, type UserState } from './catalog.js';
import { canRead, isListed, unusableReason } from './rules.js';
import { modeAllowed, ceilingFor, type ModeFacts } from './modes.js';

export { capMode, defaultModeFor, type ModeFacts } from './modes.js';

export interface UsableAgent {
  id: string;
  ownerId: string;
  hostId: string;
  engine: string;
  /** Relative to the host's work root; '' for the root itself. */
  workDir: string;
  displayName: string;
  pricing: 'free' | 'paid';
  /** The most permissive mode users other than the owner may use (modes.ts). */
  maxGuestMode: string;
}

type Em = Pick<EntityManager, 'execute'>;

/**
 * The agent a session may be opened on: the caller's own, an approved public
 * one, or one shared with the caller. NOT_FOUND when the caller cannot see
 * it; AGENT_UNUSABLE (400) when it can but the agent cannot run (disabled,
 * no host/engine bound, or not online for a non-owner). A value when this
 * node's catalog answers in this turn, else a promise; the errors are thrown
 * either way (in this turn, or by the promise), so call it where you await.
 */
export function resolveUsableAgent(ctx: HubContext, userId: string, agentId: string): UsableAgent | Promise<UsableAgent> {
  // Answered in this turn when the catalog holds it now: a hot send awaits nothing here (each await
  // is a promise, and every promise pays Node 20's hooks once MikroORM has run; bench/RESULTS.md).
  return usableNow(ctx, userId, agentId) ?? resolveLater(ctx, userId, agentId);
}

async function resolveLater(ctx: HubContext, userId: string, agentId: string): Promise<UsableAgent> {
  const hit = await fromCatalog(ctx, userId, agentId);
  if (hit) return hit;
  const rows = await ctx.em().getConnection().execute(
    `select a.id, a.owner_id, a.scope, a.review_status, a.usage_status, a.enable, a.host_id, a.engine, a.work_dir, a.display_name, a.pricing, a.max_guest_mode,
            exists (select 1 from agent_members m where m.agent_id = a.id and m.user_id = ?) as shared
       from agents a where a.id = ?`,
    [userId, agentId],
  );
  if (!rows.length) throw fail('NOT_FOUND', 'agent not found');
  const r = rows[0];
  const a = { id: r.id, ownerId: r.owner_id, scope: r.scope, reviewStatus: r.review_status, usageStatus: r.usage_status, enable: r.enable, hostId: r.host_id, engine: r.engine };
  if (!canRead(a, { userId, shared: r.shared ? new Set([a.id]) : undefined })) throw fail('NOT_FOUND', 'agent not found');
  const why = unusableReason(a, userId);
  if (why) throw fail('AGENT_UNUSABLE', why);
  return { id: a.id, ownerId: a.ownerId, hostId: r.host_id, engine: r.engine, workDir: r.work_dir, displayName: r.display_name, pricing: r.pricing, maxGuestMode: r.max_guest_mode };
}

type CatalogEntry = NonNullable<ReturnType<AgentCatalog['get']>>;

/**
 * The rule on a catalog entry and the caller's shares: the agent, AGENT_UNUSABLE thrown, or undefined
 * when the caller may not read it — then the database answers, as for an id the catalog does not hold:
 * refused at once from memory, a stranger's private agent answered its 404 faster than an unknown id,
 * which told whether a guessed id (`<owner>/<name>`) existed.
 */
function judged(e: CatalogEntry, us: UserState, userId: string): UsableAgent | undefined {
  const a = e.a;
  if (!canRead(a, { userId, shared: us.shared.has(a.id) ? new Set([a.id]) : undefined })) return undefined;
  const why = unusableReason(a, userId);
  if (why) throw fail('AGENT_UNUSABLE', why);
  return { id: a.id, ownerId: a.ownerId, hostId: a.hostId as string, engine: a.engine as string, workDir: a.workDir as string, displayName: a.displayName, pricing: a.pricing, maxGuestMode: a.maxGuestMode };
}

/** Shares judge nothing for the owner or on a listed agent (canRead, unusableReason): no user state needed. */
const NO_SHARES: UserState = { favs: new Set(), shared: new Set() };

/**
 * The catalog's answer when it needs no refresh and knows what the rule needs now; undefined
 * otherwise. The caller's shares only for another user's unlisted agent: a queued message's dispatch,
 * often more than the user state's 30 s after its send, then needs no query.
 */
function usableNow(ctx: HubContext, userId: string, agentId: string): UsableAgent | undefined {
  const cat = catalogOn(ctx.bus);
  if (!cat?.current()) return undefined;
  const e = cat.get(agentId);
  if (!e) return undefined;
  const us = e.a.ownerId === userId || isListed(e.a) ? NO_SHARES : cat.userStateNow(userId);
  return us ? judged(e, us, userId) : undefined;
}

/**
 * The same rule served from this node's market catalog (kept true by the
 * `agents` Bus events), so a hot send makes no database round trip. Undefined
 * on a miss or when the catalog is unavailable: the caller asks the database.
 */
async function fromCatalog(ctx: HubContext, userId: string, agentId: string): Promise<UsableAgent | undefined> {
  const cat = catalogOn(ctx.bus);
  if (!cat) return undefined;
  try {
    await cat.fresh();
    const e = cat.get(agentId);
    if (!e) return undefined;
    return judged(e, await cat.userState(userId), userId);
  } catch (e) {
    if (e instanceof HubError) throw e;
    return undefined; // the catalog could not refresh: the database answers
  }
}

/**
 * A mode a user asks for (session create or PATCH `mode`, `options.permissionMode`)
 * must be within the agent's ceiling for that user: MODE_NOT_ALLOWED (403) otherwise.
 */
export function requireMode(a: ModeFacts, userId: string, mode: string | undefined): void {
  if (mode === undefined || modeAllowed(a, userId, mode)) return;
  throw fail('MODE_NOT_ALLOWED', `mode "${mode}" is not allowed on this agent: its owner lets other users use modes up to "${ceilingFor(a, userId)}"`);
}

/**
 * What a run needs at dispatch: the agent's mode facts, or why it may not start — `AGENT_UNAVAILABLE`
 * when its user may no longer use the agent, `DISPATCH_CHECK_FAILED` when that could not be checked.
 */
export type RunFacts = ModeFacts | { unusable: string; code: 'AGENT_UNAVAILABLE' | 'DISPATCH_CHECK_FAILED' };

/**
 * Whether `userId` may still run `agentId` now — the rule a new message is held to
 * (resolveUsableAgent) — and the agent's mode facts when they may. Asked again at
 * dispatch, so a message queued while its user could use the agent never starts
 * after the owner removed them, disabled the agent or took it out of the market, nor
 * (with `bound`) where the owner no longer binds the agent.
 * In this turn when the catalog knows the agent and the user's shares now.
 */
export function runFactsOf(ctx: HubContext, userId: string, agentId: string, bound?: Binding): RunFacts | Promise<RunFacts> {
  // The run's copy of the agent's host, engine and work directory (taken at accept) must still be the agent's:
  // an owner who narrowed or moved the agent meanwhile did not allow the old place any more.
  const facts = (a: UsableAgent): RunFacts =>
    bound && (a.hostId !== bound.hostId || a.engine !== bound.engine || a.workDir !== bound.workDir)
      ? { code: 'AGENT_UNAVAILABLE', unusable: "the agent's host or work directory changed after this message was sent; send it again" }
      : { ownerId: a.ownerId, maxGuestMode: a.maxGuestMode };
  try {
    const now = usableNow(ctx, userId, agentId);
    if (now) return facts(now);
  } catch (e) {
    return unusableFrom(e);
  }
  return resolveLater(ctx, userId, agentId).then(facts, unusableFrom);
}

/** Where a run was bound when its message was accepted (its task's copy). */
export interface Binding {
  hostId: string;
  engine: string;
  workDir: string;
}

/** A refusal of the rule as a reason; any other failure (the database) also refuses: nothing starts unchecked. */
function unusableFrom(e: unknown): RunFacts {
  if (e instanceof HubError) return { code: 'AGENT_UNAVAILABLE', unusable: e.kind === 'NOT_FOUND' ? 'the agent is not available to you any more' : `the agent cannot run: ${e.message}` };
  return { code: 'DISPATCH_CHECK_FAILED', unusable: 'whether you may use the agent could not be checked; send the message again' };
}

/**
 * The agent's owner and ceiling, from this node's catalog (kept true by the
 * `agents` Bus events, so the dispatch path makes no database round trip),
 * the database on a miss; undefined when the agent is gone.
 */
export function modeFactsOf(ctx: HubContext, agentId: string): ModeFacts | undefined | Promise<ModeFacts | undefined> {
  // In this turn when the catalog needs no refresh (every run.start asks).
  const cat = catalogOn(ctx.bus);
  const e = cat?.current() ? cat.get(agentId) : undefined;
  return e ? { ownerId: e.a.ownerId, maxGuestMode: e.a.maxGuestMode } : modeFactsLater(ctx, agentId);
}

async function modeFactsLater(ctx: HubContext, agentId: string): Promise<ModeFacts | undefined> {
  const cat = catalogOn(ctx.bus);
  if (cat) {
    try {
      await cat.fresh();
      const e = cat.get(agentId);
      if (e) return { ownerId: e.a.ownerId, maxGuestMode: e.a.maxGuestMode };
    } catch {
      // the catalog could not refresh: the database answers
    }
  }
  const rows = await ctx.em().getConnection().execute(`select owner_id, max_guest_mode from agents where id = ?`, [agentId]);
  return rows.length ? { ownerId: rows[0].owner_id, maxGuestMode: rows[0].max_guest_mode } : undefined;
}

/**
 * A session was opened: sessionCount + 1, lastUsedAt = now. usageCount counts
 * distinct users, so pass the user; without one the session counts as a new use.
 */
export async function recordSessionOpened(em: Em, agentId: string, userId?: string): Promise<void> {
  let newUser = true;
  if (userId) {
    const ins = await em.execute(`insert into agent_users (agent_id, user_id) values (?, ?) on conflict do nothing returning user_id`, [agentId, userId]);
    newUser = ins.length > 0;
  }
  await em.execute(
    `update agents set session_count = session_count + 1, usage_count = usage_count + ?, last_used_at = now() where id = ?`,
    [newUser ? 1 : 0, agentId],
  );
}

/** One finished run as the agent counters see it. */
export interface RunCount {
  agentId: string;
  cost: number;
  /** Who ran it (the owner's share of a paid run is the charging rule's: billing/charge-function.ts). */
  userId?: string;
  /** The engine's actual model, when it changed (recorded as `modelName`). */
  modelName?: string;
}

/** Runs (turns) finished: the agents' counters, in one call of hub_record_runs (record-runs-function.ts holds the rule). */
export async function recordRuns(em: Em, runs: RunCount[]): Promise<void> {
  if (!runs.length) return;
  const batch = runs.map((r) => ({ aid: r.agentId, cost: Math.round(r.cost), uid: r.userId ?? null, model: r.modelName ?? null }));
  await em.execute(`select hub_record_runs(?::jsonb)`, [JSON.stringify(batch)]);
}

/** recordRuns for one run. */
export function recordRun(em: Em, agentId: string, run: { cost: number; userId?: string }): Promise<void> {
  return recordRuns(em, [{ agentId, ...run }]);
}

/** The actual model the engine reported (read-only `modelName`). */
export async function recordModel(em: Em, agentId: string, modelName: string): Promise<void> {
  await em.execute(`update agents set model_name = ? where id = ? and model_name is distinct from ?`, [modelName.slice(0, 200), agentId, modelName.slice(0, 200)]);
}

/** Publish after commit: every node's market cache reloads these agents (this node's at once). */
export function notifyAgentChanged(bus: Bus, ...agentIds: string[]): void {
  if (!agentIds.length) return;
  const local = catalogOn(bus);
  if (local) local.agentsChanged(...agentIds);
  else publishObj(bus, AGENTS_TOPIC, { t: 'agent', ids: agentIds } satisfies AgentEvent);
}
