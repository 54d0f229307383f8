// Market reads (list, featured, facets, one agent) and favorites. Reads are
// served from the catalog; a warm read makes no database round trip.
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { fail } from '../errors.js';
import { FAVORITES_PER_ACCOUNT, overCap } from '../account-caps.js';
import { offsetOf, pageJsonOf, pageOf } from '../paging.js';
import { orderOf, type AgentCatalog, type Entry, type MarketSort, type UserState } from './catalog.js';
import type { MarketQueryT } from './schemas.js';
import { canRead, inMarket, isListed } from './rules.js';
import { marketBytes, marketJson, marketView } from './views.js';
import { envelopeBytes, okBytes, okJson } from '../server/reply.js';

const FEATURED_MAX = 8;
const FACET_TAGS_MAX = 50;

/** Labels of the categories we know; any other key is its own label. */
export const CATEGORY_LABELS: Record<string, string> = {
  coding: 'Coding',
  writing: 'Writing',
  data: 'Data',
  ops: 'Operations',
  research: 'Research',
  design: 'Design',
  education: 'Education',
  productivity: 'Productivity',
  other: 'Other',
};

export class AgentMarket {
  private readonly keys = new WeakMap<MarketQueryT, { key: string; pageKey: string }>();
  constructor(
    private readonly ctx: HubContext,
    private readonly catalog: AgentCatalog,
  ) {}

  /** Fresh catalog and the caller's per-user state, awaiting only when something is cold. */
  private async prepare(p: Principal | undefined): Promise<UserState | undefined> {
    const f = this.catalog.fresh();
    if (f) await f;
    return p ? this.catalog.userState(p.userId) : undefined;
  }

  /**
   * `prepare` without a promise when nothing is cold (the warm read path): `then` runs at once with
   * the caller's state, else after the catalog and the state are loaded.
   */
  private warm<T>(p: Principal | undefined, then: (st: UserState | undefined) => T): T | Promise<T> {
    const f = this.catalog.fresh();
    const state = () => (p ? this.catalog.userState(p.userId) : undefined);
    if (f) return f.then(state).then(then);
    const st = state();
    return st instanceof Promise ? st.then(then) : then(st);
  }

  list(p: Principal | undefined, q: MarketQueryT) {
    return this.warm(p, (st) => this.listFor(p, st, q));
  }

  private listFor(p: Principal | undefined, st: UserState | undefined, q: MarketQueryT) {
    const sort: MarketSort = q.sort ?? 'usage';
    if ((q.favOnly || q.sharedWithMe) && !p) return pageOf([], 0, q.page, q.pageSize);
    const needle = q.q?.trim().toLowerCase();
    const tag = q.tag?.toLowerCase();
    const keep = (e: Entry) => {
      const a = e.a;
      if (q.cat && a.category !== q.cat) return false;
      if (q.scope && a.scope !== q.scope) return false;
      if (q.pricing && a.pricing !== q.pricing) return false;
      if (tag && !a.tags.some((t) => t.toLowerCase() === tag)) return false;
      if (needle && !e.hay.includes(needle)) return false;
      if (q.favOnly && !st!.favs.has(a.id)) return false;
      if (q.sharedWithMe && !st!.shared.has(a.id)) return false;
      return true;
    };
    const from = offsetOf(q.page, q.pageSize);
    const extra = p ? this.unlistedVisibleTo(p.userId, st!) : [];
    if (extra.length || q.favOnly || q.sharedWithMe) {
      const list = this.withExtra(this.catalog.listed(sort), extra, sort).filter(keep);
      return okJson(pageJsonOf(list.slice(from, from + q.pageSize).map((e) => marketJson(e, st)), list.length, q.page, q.pageSize));
    }
    // Everyone else sees the same list for the same query: memoised per catalog generation, with
    // its pages serialized; a signed-in caller's page is patched only where one of its flags is set.
    const { key, pageKey } = this.keysOf(q, sort);
    let list = this.catalog.results.get(key);
    if (!list) {
      const all = this.catalog.listed(sort);
      list = needle || q.cat || tag || q.scope || q.pricing ? all.filter(keep) : all;
      this.catalog.rememberResult(key, list);
    }
    const items = list.slice(from, from + q.pageSize);
    if (st && (st.favs.size || st.shared.size) && items.some((e) => st.favs.has(e.a.id) || st.shared.has(e.a.id))) {
      return okJson(pageJsonOf(items.map((e) => marketJson(e, st)), list.length, q.page, q.pageSize));
    }
    let body = this.catalog.pages.get(pageKey);
    if (!body) {
      body = envelopeBytes(pageJsonOf(items.map((e) => marketJson(e, undefined)), list.length, q.page, q.pageSize));
      this.catalog.rememberPage(pageKey, body);
    }
    return okBytes(body);
  }

  /**
   * The memo keys of a query's list and page. Parsed queries are shared per raw query string
   * (the request wrapper keeps them), so the keys are built once per distinct query, not per request.
   */
  private keysOf(q: MarketQueryT, sort: MarketSort): { key: string; pageKey: string } {
    let k = this.keys.get(q);
    if (!k) {
      const key = `${sort}\u0000${q.q ?? ''}\u0000${q.cat ?? ''}\u0000${q.tag ?? ''}\u0000${q.scope ?? ''}\u0000${q.pricing ?? ''}`;
      k = { key, pageKey: `${key}\u0000${q.page}\u0000${q.pageSize}` };
      this.keys.set(q, k);
    }
    return k;
  }

  /** The caller's own and shared agents that the market lists for nobody else, in no order. */
  private unlistedVisibleTo(userId: string, st: UserState): Entry[] {
    const extra: Entry[] = [];
    const viewer = { userId, shared: st.shared };
    const consider = (e: Entry | undefined) => {
      if (e && !isListed(e.a) && inMarket(e.a, viewer)) extra.push(e);
    };
    for (const e of this.catalog.ownedBy(userId)) consider(e);
    for (const id of st.shared) {
      const e = this.catalog.get(id);
      if (e && e.a.ownerId !== userId) consider(e);
    }
    return extra;
  }

  /** Listed agents plus the caller's own and shared ones, in market order. */
  private visibleTo(userId: string, st: UserState, sort: MarketSort): Entry[] {
    return this.withExtra(this.catalog.listed(sort), this.unlistedVisibleTo(userId, st), sort);
  }

  /** `listed` (already in `sort` order) merged with `extra`. */
  private withExtra(listed: Entry[], extra: Entry[], sort: MarketSort): Entry[] {
    if (!extra.length) return listed;
    const order = orderOf(sort);
    extra.sort(order);
    const out: Entry[] = [];
    let i = 0, j = 0;
    while (i < listed.length || j < extra.length) {
      if (j >= extra.length || (i < listed.length && order(listed[i], extra[j]) <= 0)) out.push(listed[i++]);
      else out.push(extra[j++]);
    }
    return out;
  }

  /** The featured rule: the most used listed agents (ties: favorites, then id), at most 8. */
  async featured(p: Principal | undefined) {
    const st = await this.prepare(p);
    return this.catalog.listed('usage').slice(0, FEATURED_MAX).map((e) => marketView(e, st));
  }

  /** Category and tag counts over the agents the caller may see in the market. */
  async facets(p: Principal | undefined) {
    const st = await this.prepare(p);
    const list = p ? this.visibleTo(p.userId, st!, 'usage') : this.catalog.listed('usage');
    const cats = new Map<string, number>();
    const tags = new Map<string, number>();
    for (const { a } of list) {
      cats.set(a.category, (cats.get(a.category) ?? 0) + 1);
      for (const t of new Set(a.tags)) tags.set(t, (tags.get(t) ?? 0) + 1);
    }
    const byCount = (x: [string, number], y: [string, number]) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1);
    return {
      cats: [...cats].sort(byCount).map(([key, count]) => ({ key, label: CATEGORY_LABELS[key] ?? key, count })),
      tags: [...tags].sort(byCount).slice(0, FACET_TAGS_MAX).map(([key, count]) => ({ key, count })),
    };
  }

  get(p: Principal | undefined, id: string) {
    return this.warm(p, (st) => okBytes(marketBytes(this.readable(p, st, id), st)));
  }

  /** The agent when the caller may read it, else NOT_FOUND (never a hint that it exists). */
  readable(p: Principal | undefined, st: UserState | undefined, id: string): Entry {
    const e = this.catalog.get(id);
    if (!e || !canRead(e.a, { userId: p?.userId, shared: st?.shared })) throw fail('NOT_FOUND', 'agent not found');
    return e;
  }

  /** Idempotent favorite toggle; favoriteCount is the number of favorite rows. */
  async setFavorite(p: Principal, id: string, on: boolean) {
    const st = await this.prepare(p);
    // Removing is allowed on an agent the caller can no longer read (its list of favorites must be able to make room).
    let readable = true;
    try {
      this.readable(p, st, id);
    } catch (e) {
      if (on) throw e;
      readable = false;
    }
    const favoriteCount = await this.ctx.em().transactional(async (em) => {
      if (on) {
        const added = await em.execute(
          `insert into agent_favorites (user_id, agent_id) select ?, ? where (select count(*) from agent_favorites where user_id = ?) < ? on conflict do nothing returning agent_id`,
          [p.userId, id, p.userId, FAVORITES_PER_ACCOUNT],
        );
        if (!added.length && !(await em.execute(`select 1 from agent_favorites where user_id = ? and agent_id = ?`, [p.userId, id])).length) {
          throw overCap(FAVORITES_PER_ACCOUNT, 'favorites', 'remove one first');
        }
      } else {
        const gone = await em.execute(`delete from agent_favorites where user_id = ? and agent_id = ? returning agent_id`, [p.userId, id]);
        if (!gone.length && !readable) throw fail('NOT_FOUND', 'agent not found');
      }
      const rows = await em.execute(`select count(*) as n from agent_favorites where agent_id = ?`, [id]);
      return Number(rows[0].n);
    });
    this.catalog.agentsChanged(id);
    this.catalog.usersChanged(p.userId);
    return { agentId: id, favorited: on, favoriteCount };
  }
}
