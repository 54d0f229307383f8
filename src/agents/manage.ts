// Owner management: create, update (publication state machine), delete,
// the `mine` list, the management view and the owner's statistics.
// Another account's agent is always NOT_FOUND here.
import { LockMode } from '@mikro-orm/postgresql';
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { fail } from '../errors.js';
import { enforceQuota } from '../billing/quotas.js';
import { AGENT_RETIREMENTS_PER_DAY } from '../account-caps.js';
import { offsetOf, pageOf } from '../paging.js';
import { Agent } from './entities.js';
import type { AgentCatalog, Entry } from './catalog.js';
import type { HostLookup } from './hostinfo.js';
import type { AgentWriteBody, MineQueryT } from './schemas.js';
import { checkWorkDir, defaultEnable, effectivePricing, idStem, initialState, isSubstantive, nextState, prefixStem, SUBSTANTIVE } from './rules.js';
import { manageView, ownerView } from './views.js';
import { DEFAULT_GUEST_MODE } from './modes.js';

const MAX_PATH_ID = 120;

/** Management paths take ids of 1 to 120 characters. */
export function checkPathId(id: string): void {
  if (!id || id.length > MAX_PATH_ID) throw fail('VALIDATION', `agent id must be 1 to ${MAX_PATH_ID} characters`);
}

const MINE_ORDER: Record<string, (x: Entry, y: Entry) => number> = {
  usage: (x, y) => y.a.usageCount - x.a.usageCount || byRecent(x, y),
  recent: (x, y) => byRecent(x, y),
  sessions: (x, y) => y.a.sessionCount - x.a.sessionCount || byRecent(x, y),
  runs: (x, y) => y.a.runs - x.a.runs || byRecent(x, y),
  cost: (x, y) => y.a.cost - x.a.cost || byRecent(x, y),
  earn: (x, y) => y.a.earn - x.a.earn || byRecent(x, y),
};
function byRecent(x: Entry, y: Entry) {
  return y.a.updatedAt.getTime() - x.a.updatedAt.getTime() || (x.a.id < y.a.id ? -1 : 1);
}

/** Runs before an agent's rows go; resolves when what the agent runs has stopped (bounded by the implementer). */
export type BeforeAgentDelete = (agentId: string) => Promise<void>;

export class AgentManager {
  private beforeDelete: BeforeAgentDelete[] = [];

  constructor(
    private readonly ctx: HubContext,
    private readonly catalog: AgentCatalog,
    private readonly hosts: HostLookup,
  ) {}

  async create(p: Principal, b: AgentWriteBody) {
    await enforceQuota(this.ctx, p.userId, 'agents');
    // The quota counts agents held; each deleted one leaves its retired id for good. An account that
    // deleted many in the last day creates none until the day has passed (create-then-delete was unbounded).
    const [r] = await this.ctx.em().getConnection().execute(
      `select count(*)::int as n from agent_ids_retired where owner_id = ? and retired_at > now() - interval '1 day'`, [p.userId]);
    if (Number(r?.n ?? 0) >= AGENT_RETIREMENTS_PER_DAY) {
      throw fail('RATE_LIMITED', `an account that deleted ${AGENT_RETIREMENTS_PER_DAY} agents in the last 24 hours creates no more until some of those deletions are a day old`);
    }
    const hostId = b.hostId ?? '';
    const engine = b.engine ?? '';
    await this.checkBinding(p.userId, hostId, engine);
    this.checkWorkDir(b.workDir);
    const now = new Date();
    const scope = b.scope ?? 'private';
    const name = b.name ?? 'new-agent';
    const a = Object.assign(new Agent(), {
      ownerId: p.userId,
      name,
      displayName: b.displayName ?? name,
      description: b.desc ?? '',
      tags: b.tags ?? [],
      category: b.cat || 'other',
      pricing: effectivePricing(scope, b.pay ?? 'free'),
      enable: b.enable ?? defaultEnable(b.step),
      hostId: hostId || null,
      engine: engine || null,
      workDir: b.workDir ?? '',
      expectedInput: b.expectedInput ?? '',
      expectedOutput: b.expectedOutput ?? '',
      maxGuestMode: b.maxGuestMode ?? DEFAULT_GUEST_MODE,
      createdAt: now,
      updatedAt: now,
      ...initialState(scope, b.step, now),
    });
    a.id = await this.insertWithFreshId(a, idStem(await this.ownerPrefix(p.userId, p.name), name));
    this.catalog.agentsChanged(a.id);
    return this.ownerResult(p.userId, a.id);
  }

  async update(p: Principal, id: string, b: AgentWriteBody) {
    checkPathId(id);
    if (('hostId' in b) !== ('engine' in b)) throw fail('VALIDATION', 'hostId and engine must be supplied together');
    if (!(await this.ctx.em().count(Agent, { id, ownerId: p.userId }))) throw fail('NOT_FOUND', 'agent not found');
    // The binding is checked first, outside the lock (its query takes a connection of its own).
    if ('hostId' in b) await this.checkBinding(p.userId, b.hostId!, b.engine!);
    this.checkWorkDir(b.workDir);
    // Read, decide and write under the row's lock: an approval committed between the read and the
    // write left the agent approved with the owner's new, unreviewed text (only changed columns are written).
    await this.ctx.em().transactional(async (em) => {
      const a = await em.findOne(Agent, { id, ownerId: p.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!a) throw fail('NOT_FOUND', 'agent not found');
      this.apply(a, b);
    });
    this.catalog.agentsChanged(id);
    return this.ownerResult(p.userId, id);
  }

  /** The body's changes on the agent, and its publication state after them (rules.ts). */
  private apply(a: Agent, b: AgentWriteBody): void {
    const before = Object.fromEntries(SUBSTANTIVE.map((k) => [k, a[k]])) as Pick<Agent, (typeof SUBSTANTIVE)[number]>;
    const scope = b.scope ?? a.scope;
    if (b.name !== undefined) a.name = b.name;
    if (b.displayName !== undefined) a.displayName = b.displayName;
    if (b.desc !== undefined) a.description = b.desc;
    if (b.tags !== undefined) a.tags = b.tags;
    if (b.cat !== undefined) a.category = b.cat || 'other';
    a.pricing = effectivePricing(scope, b.pay ?? a.pricing);
    if ('hostId' in b) {
      a.hostId = b.hostId || null;
      a.engine = b.engine || null;
    }
    if (b.workDir !== undefined) a.workDir = b.workDir;
    if (b.expectedInput !== undefined) a.expectedInput = b.expectedInput;
    if (b.expectedOutput !== undefined) a.expectedOutput = b.expectedOutput;
    if (b.maxGuestMode !== undefined) a.maxGuestMode = b.maxGuestMode;
    if (b.enable !== undefined) a.enable = b.enable;
    const cur = { scope: a.scope, usageStatus: a.usageStatus, reviewStatus: a.reviewStatus, rejectReason: a.rejectReason, version: a.version, submittedAt: a.submittedAt };
    Object.assign(a, nextState(cur, scope, b.step, isSubstantive(before, a), new Date()));
    // A draft starts disabled (defaultEnable); leaving draft it takes the non-draft default, unless told: an
    // approved agent submitted from a draft otherwise never reached the market.
    if (cur.usageStatus === 'draft' && a.usageStatus !== 'draft' && b.enable === undefined) a.enable = defaultEnable(b.step);
    a.updatedAt = new Date();
  }

  onBeforeDelete(hook: BeforeAgentDelete): void {
    this.beforeDelete.push(hook);
  }

  /**
   * Deletes the agent; favorites, shares and sessions go with it (ON DELETE CASCADE). First the
   * agent is disabled (no new message is accepted for it) and the registered hooks stop what it
   * runs on hosts, so no engine keeps running for sessions that no longer exist.
   */
  async remove(p: Principal, id: string): Promise<void> {
    checkPathId(id);
    const own = await this.ctx.em().getConnection().execute(`update agents set enable = false where id = ? and owner_id = ? returning id`, [id, p.userId]);
    if (!own.length) throw fail('NOT_FOUND', 'agent not found');
    this.catalog.agentsChanged(id);
    for (const hook of this.beforeDelete) await hook(id);
    const touched = await this.ctx.em().transactional(async (em) => {
      const rows = await em.execute(`select 1 from agents where id = ? and owner_id = ? for update`, [id, p.userId]);
      if (!rows.length) throw fail('NOT_FOUND', 'agent not found');
      // Users whose cached favorites/shares name this id must forget it.
      const users = await em.execute(`select user_id from agent_favorites where agent_id = ? union select user_id from agent_members where agent_id = ?`, [id, id]);
      await em.execute(`delete from agents where id = ?`, [id]);
      // The id is never given to another agent: approvals, links and favorites name this one.
      await em.execute(`insert into agent_ids_retired (id, owner_id) values (?, ?) on conflict do nothing`, [id, p.userId]);
      return users.map((r: any) => r.user_id as string);
    });
    this.catalog.agentsChanged(id);
    this.catalog.usersChanged(...touched);
  }

  async mine(p: Principal, q: MineQueryT) {
    await this.catalog.fresh();
    const statuses = q.usageStatus ? new Set(q.usageStatus.split(',')) : undefined;
    const kw = q.keyword?.toLowerCase();
    const list = this.catalog.ownedBy(p.userId).filter(({ a, hay }) => {
      if (kw && !hay.includes(kw) && !a.id.includes(kw)) return false;
      if (statuses && !statuses.has(a.usageStatus)) return false;
      if (q.scope && a.scope !== q.scope) return false;
      if (q.pay && a.pricing !== q.pay) return false;
      if (q.engine && a.engine !== q.engine) return false;
      if (q.hostId && a.hostId !== q.hostId) return false;
      if (q.enable && String(a.enable) !== q.enable) return false;
      return true;
    });
    list.sort(MINE_ORDER[q.sort ?? 'usage']);
    const slice = list.slice(offsetOf(q.page, q.pageSize), offsetOf(q.page, q.pageSize) + q.pageSize);
    const [hosts, st] = await Promise.all([this.hosts.info(slice.map((e) => e.a.hostId)), this.catalog.userState(p.userId)]);
    return pageOf(slice.map((e) => ownerView(e, st, e.a.hostId ? hosts.get(e.a.hostId) : undefined)), list.length, q.page, q.pageSize);
  }

  async manage(p: Principal, id: string) {
    checkPathId(id);
    const e = await this.ownEntry(p.userId, id);
    const [hosts, st] = await Promise.all([this.hosts.info([e.a.hostId]), this.catalog.userState(p.userId)]);
    return manageView(e, st, e.a.hostId ? hosts.get(e.a.hostId) : undefined);
  }

  async stats(p: Principal, id: string) {
    const { a } = await this.ownEntry(p.userId, id);
    const rows = await this.ctx.em().getConnection().execute(
      `select (select count(*) from agent_members where agent_id = ?) as members, (select count(*) from agent_favorites where agent_id = ?) as favorites`,
      [id, id],
    );
    return {
      id: a.id,
      usageStatus: a.usageStatus,
      reviewStatus: a.reviewStatus,
      version: a.version,
      usageCount: a.usageCount,
      sessionCount: a.sessionCount,
      runs: a.runs,
      cost: a.cost,
      earn: a.earn,
      favoriteCount: Number(rows[0].favorites),
      sharedWith: Number(rows[0].members),
      lastUsedAt: a.lastUsedAt ? a.lastUsedAt.getTime() : null,
    };
  }

  /** Counts of the caller's agents by state. */
  async overview(p: Principal) {
    await this.catalog.fresh();
    const mine = this.catalog.ownedBy(p.userId);
    const byStatus = { draft: 0, offline: 0, reviewing: 0, online: 0 };
    let pub = 0, enabled = 0, rejected = 0, approved = 0;
    for (const { a } of mine) {
      byStatus[a.usageStatus]++;
      if (a.scope === 'public') pub++;
      if (a.enable) enabled++;
      if (a.reviewStatus === 'rejected') rejected++;
      if (a.reviewStatus === 'approved') approved++;
    }
    return { total: mine.length, byStatus, public: pub, private: mine.length - pub, enabled, approved, rejected };
  }

  /** Totals of the caller's agents' counters. */
  async statsSummary(p: Principal) {
    await this.catalog.fresh();
    const t = { agents: 0, usageCount: 0, sessionCount: 0, runs: 0, cost: 0, earn: 0, favoriteCount: 0, lastUsedAt: null as number | null };
    for (const { a } of this.catalog.ownedBy(p.userId)) {
      t.agents++;
      t.usageCount += a.usageCount;
      t.sessionCount += a.sessionCount;
      t.runs += a.runs;
      t.cost += a.cost;
      t.earn += a.earn;
      t.favoriteCount += a.favoriteCount;
      if (a.lastUsedAt && (t.lastUsedAt === null || a.lastUsedAt.getTime() > t.lastUsedAt)) t.lastUsedAt = a.lastUsedAt.getTime();
    }
    return t;
  }

  // ---------- helpers ----------
  /** The caller's own agent from the fresh catalog, or NOT_FOUND. */
  async ownEntry(userId: string, id: string): Promise<Entry> {
    await this.catalog.fresh();
    const e = this.catalog.get(id);
    if (!e || e.a.ownerId !== userId) throw fail('NOT_FOUND', 'agent not found');
    return e;
  }

  private async ownerResult(userId: string, id: string) {
    const e = await this.ownEntry(userId, id);
    const [hosts, st] = await Promise.all([this.hosts.info([e.a.hostId]), this.catalog.userState(userId)]);
    return ownerView(e, st, e.a.hostId ? hosts.get(e.a.hostId) : undefined);
  }

  /** hostId and engine come together; the host must be the caller's and report the engine. */
  private async checkBinding(userId: string, hostId: string, engine: string): Promise<void> {
    if (!hostId !== !engine) throw fail('VALIDATION', 'hostId and engine must be supplied together');
    if (!hostId) return;
    const host = await this.hosts.owned(userId, hostId);
    if (!host) throw fail('NOT_FOUND', 'host not found');
    if (!host.engines.includes(engine)) throw fail('VALIDATION', `engine "${engine}" is not reported by host ${hostId}`);
  }

  private checkWorkDir(w: string | undefined): void {
    const why = w === undefined ? null : checkWorkDir(w);
    if (why) throw fail('VALIDATION', why);
  }

  /**
   * The account's prefix of agent ids, taken at its first agent: the name's slug, or the slug with -2,
   * -3 when another account holds it (as its prefix, or in ids of agents from before prefixes), so one
   * account's ids never depend on, or tell of, another's agents.
   */
  private async ownerPrefix(userId: string, ownerName: string): Promise<string> {
    const conn = this.ctx.em().getConnection();
    const base = prefixStem(ownerName, userId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const had = await conn.execute(`select agent_prefix from users where id = ?`, [userId]);
      if (had[0]?.agent_prefix) return had[0].agent_prefix as string;
      const like = `${base}%`; // a slug: no LIKE metacharacter in it
      const taken = new Set<string>((await conn.execute(
        `select agent_prefix as p from users where agent_prefix like ?
         union select split_part(id, '/', 1) from agents where id like ? and owner_id <> ?`,
        [like, `${like}/%`, userId],
      )).map((r: any) => r.p as string));
      let prefix = base;
      for (let n = 2; taken.has(prefix); n++) prefix = `${base}-${n}`;
      try {
        await conn.execute(`update users set agent_prefix = ? where id = ? and agent_prefix is null`, [prefix, userId]);
      } catch (e) {
        if (!/duplicate key|unique/i.test(String((e as Error).message))) throw e; // taken meanwhile: draw again
      }
    }
    throw fail('CONFLICT', 'could not allocate an agent id prefix, retry');
  }

  /** Inserts with the first free `<stem>`, `<stem>-2`, … (retired ids are not free); a concurrent taker of the same id makes us retry. */
  private async insertWithFreshId(a: Agent, stem: string): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const em = this.ctx.em();
      const rows = await em.getConnection().execute(
        `select id from agents where id = ? or id like ? union all select id from agent_ids_retired where id = ? or id like ?`,
        [stem, `${stem}-%`, stem, `${stem}-%`]);
      const taken = new Set(rows.map((r: any) => r.id as string));
      let id = stem;
      for (let n = 2; taken.has(id); n++) id = `${stem}-${n}`;
      try {
        await em.persist(Object.assign(a, { id })).flush();
        return id;
      } catch (e) {
        if (!/duplicate key|unique/i.test(String((e as Error).message))) throw e;
      }
    }
    throw fail('CONFLICT', 'could not allocate an agent id, retry');
  }
}
