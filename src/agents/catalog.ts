// The in-process read path of the market: every agent row (with its owner's
// name and a prebuilt view) in memory, plus per-user favorites and shares.
// Writers publish `agents` Bus events after commit; every node marks the ids
// dirty (or drops the user's state) and reloads them, batched, before its
// next read. A warm read makes no database round trip.
import type { HubContext } from '../context.js';
import { publishObj, subscribeObj, type Bus } from '../bus/bus.js';
import { ExpiringMap } from '../bus/expiring.js';
import { Agent } from './entities.js';
import { isListed } from './rules.js';
import { baseView, plainView, type BaseView, type MarketView } from './views.js';

export const AGENTS_TOPIC = 'agents';
export type AgentEvent = { t: 'agent'; ids: string[] } | { t: 'user'; userIds: string[] };

export interface Entry {
  a: Agent;
  /** The row's digest when read (DIGEST): the resync's comparison. */
  digest: string;
  ownerName: string;
  /** Lowercased text searched by `q`. */
  hay: string;
  base: BaseView;
  /** The market view with no per-caller flag set (immutable; shared by responses). */
  plain: MarketView;
  /** marketJson's memo: the serialized view per pair of caller flags, filled on first use. */
  json?: string[];
  /** The same as whole 200 envelopes in bytes (GET /agents/{id}), filled on first use. */
  bytes?: Buffer[];
}

export interface UserState {
  favs: Set<string>;
  shared: Set<string>;
}

export type MarketSort = 'usage' | 'recent' | 'favs' | 'sessions';

const ORDER: Record<MarketSort, (x: Entry, y: Entry) => number> = {
  usage: (x, y) => y.a.usageCount - x.a.usageCount || y.a.favoriteCount - x.a.favoriteCount || tie(x, y),
  recent: (x, y) => y.a.updatedAt.getTime() - x.a.updatedAt.getTime() || tie(x, y),
  favs: (x, y) => y.a.favoriteCount - x.a.favoriteCount || y.a.usageCount - x.a.usageCount || tie(x, y),
  sessions: (x, y) => y.a.sessionCount - x.a.sessionCount || y.a.usageCount - x.a.usageCount || tie(x, y),
};
function tie(x: Entry, y: Entry) {
  return x.a.id < y.a.id ? -1 : x.a.id > y.a.id ? 1 : 0;
}
export const orderOf = (sort: MarketSort) => ORDER[sort];

/** The catalog living on a Bus in this process, so usage.ts can invalidate locally at once. */
const catalogs = new WeakMap<Bus, AgentCatalog>();
export const catalogOn = (bus: Bus): AgentCatalog | undefined => catalogs.get(bus);

const USERS_MAX = 50_000;
const RESULTS_MAX = 1_000;

export class AgentCatalog {
  private rows = new Map<string, Entry>();
  private byOwner = new Map<string, Set<string>>();
  private dirty = new Set<string>();
  private loaded = false;
  /** Set when something outside agents changed many rows (an account was deleted): reload everything. */
  private stale = false;
  private refreshing: Promise<void> | null = null;
  private sortedListed = new Map<MarketSort, Entry[]>();
  /** Per-generation memo of filtered lists and of finished pages (anonymous market queries). */
  readonly results = new Map<string, Entry[]>();
  readonly pages = new Map<string, Buffer>();
  /** Shares guard access: trusted for AUTH_CACHE_TTL_MS only, in case an invalidation was lost in a Redis outage. */
  private users = new ExpiringMap<string, UserState>(() => this.ctx.config.authCacheTtlMs, USERS_MAX);
  private userEpoch = new Map<string, number>();
  /** Bumped when every user's state is dropped at once (bus reconnect). */
  private allUsersEpoch = 0;
  private unsubs: Array<() => void>;
  private resyncTimer: NodeJS.Timeout;
  private resyncing = false;
  /** Bumped whenever any row changes; derived caches are keyed by it. */
  generation = 0;

  constructor(private readonly ctx: HubContext) {
    catalogs.set(ctx.bus, this);
    this.unsubs = [
      subscribeObj<AgentEvent>(ctx.bus, AGENTS_TOPIC, (ev) => this.onEvent(ev)),
      // Deleting an account cascades to its agents, favorites and shares (accounts/ publishes `auth` user events).
      subscribeObj<{ t: string; userId?: string }>(ctx.bus, 'auth', (ev) => {
        if (ev.t !== 'user' || !ev.userId) return;
        this.stale = true;
        this.onEvent({ t: 'user', userIds: [ev.userId] });
      }),
      // Events may have been lost while the bus was down: reload every row and every user's state.
      ctx.bus.onReconnect(() => {
        this.stale = true;
        this.allUsersEpoch++;
        this.users.clear();
      }),
    ];
    // Rows guard access (scope, enable, the guest mode ceiling, the host binding) and are trusted until an
    // event says otherwise; an event lost for good (a writer gone between its commit and its publish)
    // would leave a node wrong for ever, so each node compares itself with the table now and then.
    this.resyncTimer = setInterval(() => void this.resync(), ctx.config.agentsResyncMs);
    this.resyncTimer.unref();
  }

  /** Reads every row's digest and marks dirty those that differ from what is held (or are new, or gone); the next read reloads them. */
  private async resync(): Promise<void> {
    if (!this.loaded || this.stale || this.resyncing) return;
    this.resyncing = true;
    try {
      const seen = new Set<string>();
      // Each row's digest, not the row: a node compares what it holds without the table crossing the wire.
      for (const r of (await this.ctx.em().getConnection().execute(`select a.id, ${DIGEST} as digest ${FROM}`)) as Array<{ id: string; digest: string }>) {
        seen.add(r.id);
        // A row reloaded meanwhile may read as differing: marking it dirty costs one reload, never a wrong answer.
        if (this.rows.get(r.id)?.digest !== r.digest) this.dirty.add(r.id);
      }
      for (const id of this.rows.keys()) if (!seen.has(id)) this.dirty.add(id);
    } catch (e) {
      this.ctx.log.warn('agents catalog resync failed; the next one tries again', { err: e });
    } finally {
      this.resyncing = false;
    }
  }

  // ---------- invalidation (call after commit) ----------
  /** Marks the rows stale here at once (read-your-writes even when the Bus is remote) and tells every other node. */
  agentsChanged(...ids: string[]): void {
    if (!ids.length) return;
    this.onEvent({ t: 'agent', ids });
    publishObj(this.ctx.bus, AGENTS_TOPIC, { t: 'agent', ids } satisfies AgentEvent);
  }
  usersChanged(...userIds: string[]): void {
    if (!userIds.length) return;
    this.onEvent({ t: 'user', userIds });
    publishObj(this.ctx.bus, AGENTS_TOPIC, { t: 'user', userIds } satisfies AgentEvent);
  }

  private onEvent(ev: AgentEvent): void {
    if (ev.t === 'agent') for (const id of ev.ids) this.dirty.add(id);
    else
      for (const u of ev.userIds) {
        this.users.delete(u);
        this.userEpoch.set(u, (this.userEpoch.get(u) ?? 0) + 1);
      }
  }

  // ---------- freshness ----------
  /** Undefined when already fresh (the hot path stays synchronous); otherwise a promise to await. */
  fresh(): Promise<void> | undefined {
    if (this.current()) return undefined;
    return this.refresh();
  }

  /** True when reads need no refresh first (fresh() would return undefined); starts nothing. */
  current(): boolean {
    return this.loaded && !this.stale && this.dirty.size === 0 && !this.refreshing;
  }

  private async refresh(): Promise<void> {
    while (!this.current()) {
      if (!this.refreshing) {
        this.refreshing = (this.loaded && !this.stale ? this.reload([...this.dirty]) : this.loadAll()).finally(() => {
          this.refreshing = null;
        });
      }
      await this.refreshing;
    }
  }

  private async loadAll(): Promise<void> {
    const dirty = [...this.dirty];
    this.dirty.clear();
    this.stale = false;
    let rows: Entry[];
    try {
      rows = await this.query('');
    } catch (e) {
      // Still stale: the next read loads again (a failed reload served the old rows as fresh, the changes it was told of lost).
      this.stale = true;
      for (const id of dirty) this.dirty.add(id);
      throw e;
    }
    this.rows = new Map();
    this.byOwner = new Map();
    for (const r of rows) this.put(r);
    this.loaded = true;
    this.bump();
  }

  private async reload(ids: string[]): Promise<void> {
    for (const id of ids) this.dirty.delete(id);
    const found = new Map<string, Entry>();
    try {
      for (let i = 0; i < ids.length; i += 500) {
        const part = ids.slice(i, i + 500);
        for (const e of await this.query(`where a.id in (${part.map(() => '?').join(',')})`, part)) found.set(e.a.id, e);
      }
    } catch (e) {
      for (const id of ids) this.dirty.add(id); // still stale: retry on the next read
      throw e;
    }
    for (const id of ids) {
      const e = found.get(id);
      if (e) this.put(e);
      else this.drop(id);
    }
    this.bump();
  }

  private async query(where: string, params: unknown[] = []): Promise<Entry[]> {
    const rows = await this.ctx.em().getConnection().execute(`select a.*, u.name as owner_name, fc.n as favorite_count, ${DIGEST} as digest ${FROM} ${where}`, params);
    return rows.map((r: any) => entryOf(r));
  }

  private put(e: Entry): void {
    const old = this.rows.get(e.a.id);
    if (old && old.a.ownerId !== e.a.ownerId) this.byOwner.get(old.a.ownerId)?.delete(e.a.id);
    this.rows.set(e.a.id, e);
    let s = this.byOwner.get(e.a.ownerId);
    if (!s) this.byOwner.set(e.a.ownerId, (s = new Set()));
    s.add(e.a.id);
  }

  private drop(id: string): void {
    const old = this.rows.get(id);
    if (!old) return;
    this.rows.delete(id);
    this.byOwner.get(old.a.ownerId)?.delete(id);
  }

  private bump(): void {
    this.generation++;
    this.sortedListed.clear();
    this.results.clear();
    this.pages.clear();
  }

  // ---------- reads (call after `fresh()`) ----------
  get(id: string): Entry | undefined {
    return this.rows.get(id);
  }
  all(): IterableIterator<Entry> {
    return this.rows.values();
  }
  ownedBy(userId: string): Entry[] {
    const ids = this.byOwner.get(userId);
    if (!ids) return [];
    const out: Entry[] = [];
    for (const id of ids) {
      const e = this.rows.get(id);
      if (e) out.push(e);
    }
    return out;
  }
  /** Listed agents in the given order, memoised per generation. */
  listed(sort: MarketSort): Entry[] {
    let l = this.sortedListed.get(sort);
    if (!l) {
      l = [...this.rows.values()].filter((e) => isListed(e.a)).sort(ORDER[sort]);
      this.sortedListed.set(sort, l);
    }
    return l;
  }
  rememberResult(key: string, list: Entry[]): void {
    if (this.results.size >= RESULTS_MAX) this.results.clear();
    this.results.set(key, list);
  }
  rememberPage(key: string, page: Buffer): void {
    if (this.pages.size >= RESULTS_MAX) this.pages.clear();
    this.pages.set(key, page);
  }

  /** The caller's favorites and shares, cached until a `user` event (or the TTL). */
  userState(userId: string): UserState | Promise<UserState> {
    return this.users.get(userId) ?? this.loadUser(userId);
  }

  /** The user's favorites and shares when this node holds them; undefined otherwise (starts no read). */
  userStateNow(userId: string): UserState | undefined {
    return this.users.get(userId);
  }

  private async loadUser(userId: string): Promise<UserState> {
    const epoch = this.userEpoch.get(userId) ?? 0;
    const all = this.allUsersEpoch;
    const rows = await this.ctx.em().getConnection().execute(
      `select agent_id, 'f' as k from agent_favorites where user_id = ? union all select agent_id, 'm' as k from agent_members where user_id = ?`,
      [userId, userId],
    );
    const st: UserState = { favs: new Set(), shared: new Set() };
    for (const r of rows) (r.k === 'f' ? st.favs : st.shared).add(r.agent_id);
    // An event that arrived while we read makes this result stale: do not keep it.
    if ((this.userEpoch.get(userId) ?? 0) === epoch && this.allUsersEpoch === all) this.users.set(userId, st);
    return st;
  }

  close(): void {
    clearInterval(this.resyncTimer);
    for (const u of this.unsubs) u();
    if (catalogs.get(this.ctx.bus) === this) catalogs.delete(this.ctx.bus);
  }
}

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const date = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string));

// favoriteCount is counted, not stored: a deleted account's favorites vanish by cascade and must not linger in a counter.
const FROM = `from agents a join users u on u.id = a.owner_id
  cross join lateral (select count(*) as n from agent_favorites f where f.agent_id = a.id) fc`;
/** What an entry was made of, as the database sees it: the periodic resync compares these. */
const DIGEST = `md5(a::text || '|' || u.name || '|' || fc.n)`;

/** A raw joined row → catalog entry. */
function entryOf(r: any): Entry {
  const a = Object.assign(new Agent(), {
    id: r.id,
    ownerId: r.owner_id,
    name: r.name,
    displayName: r.display_name,
    description: r.description,
    tags: typeof r.tags === 'string' ? JSON.parse(r.tags) : r.tags ?? [],
    category: r.category,
    scope: r.scope,
    pricing: r.pricing,
    usageStatus: r.usage_status,
    reviewStatus: r.review_status,
    rejectReason: r.reject_reason,
    enable: r.enable,
    version: Number(r.version),
    hostId: r.host_id,
    engine: r.engine,
    workDir: r.work_dir,
    expectedInput: r.expected_input,
    expectedOutput: r.expected_output,
    maxGuestMode: r.max_guest_mode ?? 'default',
    modelName: r.model_name,
    usageCount: num(r.usage_count),
    sessionCount: num(r.session_count),
    runs: num(r.runs),
    cost: num(r.cost),
    earn: num(r.earn),
    favoriteCount: num(r.favorite_count),
    lastUsedAt: date(r.last_used_at),
    submittedAt: date(r.submitted_at),
    reviewedAt: date(r.reviewed_at),
    createdAt: date(r.created_at)!,
    updatedAt: date(r.updated_at)!,
  });
  const hay = [a.name, a.displayName, a.description, ...a.tags].join('\n').toLowerCase();
  const base = baseView(a, r.owner_name);
  return { a, ownerName: r.owner_name, hay, base, plain: plainView(a, r.owner_name), digest: r.digest };
}
