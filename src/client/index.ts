// The typed client of the hub's API, for the console and the tests. Request and
// response types are the route schemas themselves (type-only imports: nothing of
// the server reaches a bundle), so a shape is declared once, where it is checked.
import type { Static } from 'typebox';
import type { MarketAgent, OwnerAgent, PageOf, Facets, Favorite } from '../agents/view-schemas.js';
import type { MarketQuery, MineQuery } from '../agents/schemas.js';
import type { Session, SessionPage, History, Accepted, Aborted, Cost, Queue } from '../sessions/view-schemas.js';
import type { CreateBody, SendBody, ListQuery, HistoryQuery } from '../sessions/routes.js';
import type { Host, HostList, PairKey as PairKeySchema } from '../hosts/view-schemas.js';
import type { User as UserSchema } from '../accounts/view-schemas.js';
// Model configurations, account, billing and administration (console pages of issue 13).
import type { ModelConfigView, ModelConfigList, Applied, Binding } from '../model-configs/view-schemas.js';
import type { Create as McCreate, Patch as McPatch, Test as McTest } from '../model-configs/routes.js';
import type { ModelTestResult } from '../../host-protocol/frames.js';
import type { ApiKeyList, NewApiKey, KeyDeleted, UserPage } from '../accounts/view-schemas.js';
import type { BindingService } from '../accounts/bindings.js';
import type { Balance, LedgerPage, Plans, TokenPacks, Products } from '../billing/view-schemas.js';
import type { LedgerQuery, TrendsQuery, OrdersQuery, RedeemsQuery, AdminRedeemsQuery, TokenPackOrder as TokenPackOrderSchema } from '../billing/schemas.js';
import type { Statement } from '../billing/statement.js';
import type { OrderService } from '../billing/orders.js';
import type { RedeemService } from '../billing/redeems.js';
import type { Subscriptions } from '../billing/subscriptions.js';
import type { ReviewAgent as ReviewAgentSchema } from '../agents/view-schemas.js';
import type { PageQuery } from '../agents/schemas.js';

/** What a checker accepts: its parsed type, with the fields that have a default left optional. */
type Input<C extends { parse(...a: any[]): any }> = Partial<ReturnType<C['parse']>>;
type Body<C extends { parse(...a: any[]): any }> = ReturnType<C['parse']>;

export type Agent = Static<typeof MarketAgent>;
export type MyAgent = Static<typeof OwnerAgent>;
export type AgentPage = Static<ReturnType<typeof PageOf<typeof MarketAgent>>>;
export type MyAgentPage = Static<ReturnType<typeof PageOf<typeof OwnerAgent>>>;
export type AgentFacets = Static<typeof Facets>;
export type FavoriteState = Static<typeof Favorite>;
export type MarketParams = Input<typeof MarketQuery>;
export type MineParams = Input<typeof MineQuery>;
export type SessionView = Static<typeof Session>;
export type Sessions = Static<typeof SessionPage>;
export type SessionHistory = Static<typeof History>;
export type SessionParams = Input<typeof ListQuery>;
export type HistoryParams = Input<typeof HistoryQuery>;
export type NewSession = Body<typeof CreateBody>;
export type NewMessage = Body<typeof SendBody>;
/** The spec's plain 202 answer of a message that started or queued a run. */
export type AcceptedRun = Static<typeof Accepted>;
export type HostView = Static<typeof Host>;
export type Hosts = Static<typeof HostList>;
export type PairKey = Static<typeof PairKeySchema>;
export type User = Static<typeof UserSchema>;

// ---- model configurations, account, billing, administration ----
/** Where a route has no response schema, the type is the service method's own answer (type-only). */
type Answer<F extends (...a: any[]) => any> = Awaited<ReturnType<F>>;
export type ModelConfig = Static<typeof ModelConfigView>;
export type ModelConfigs = Static<typeof ModelConfigList>;
export type NewModelConfig = Body<typeof McCreate>;
export type ModelConfigPatch = Body<typeof McPatch>;
export type ModelTestInput = Body<typeof McTest>;
export type ModelTest = Static<typeof ModelTestResult>;
export type HostBinding = Static<typeof Binding>;
export type AppliedBinding = Static<typeof Applied>;
export type ApiKeys = Static<typeof ApiKeyList>;
export type ApiKey = ApiKeys['items'][number];
export type CreatedApiKey = Static<typeof NewApiKey>;
export type BalanceView = Static<typeof Balance>;
export type Ledger = Static<typeof LedgerPage>;
export type LedgerParams = Input<typeof LedgerQuery>;
export type TrendParams = Input<typeof TrendsQuery>;
export type Trends = Answer<Statement['trends']>;
export type MyPlan = Answer<Subscriptions['myPlan']>;
export type PlanList = Static<typeof Plans>;
export type TokenPackList = Static<typeof TokenPacks>;
export type TokenPackOrder = Body<typeof TokenPackOrderSchema>;
export type Order = Answer<OrderService['get']>;
export type Orders = Answer<OrderService['list']>;
export type OrderParams = Input<typeof OrdersQuery>;
export type ProductList = Static<typeof Products>;
export type Redemption = Answer<RedeemService['getMine']>;
export type Redemptions = Answer<RedeemService['listMine']>;
export type RedeemParams = Input<typeof RedeemsQuery>;
export type Bindings = Answer<BindingService['bindings']>;
export type ReviewAgent = Static<typeof ReviewAgentSchema>;
export type ReviewPage = Static<ReturnType<typeof PageOf<typeof ReviewAgentSchema>>>;
export type PageParams = Input<typeof PageQuery>;
export type Users = Static<typeof UserPage>;
export type AdminRedemptions = Answer<RedeemService['list']>;
export type AdminRedemption = AdminRedemptions['items'][number];
export type AdminRedeemParams = Input<typeof AdminRedeemsQuery>;

/** A failed call: the HTTP status and the catalogue's code and message from the envelope. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export interface ClientOptions {
  /** The hub's origin ('' for the page's own origin, as the console uses it). */
  baseUrl: string;
  /** An API key or access token, sent as the bearer. */
  token?: string;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | undefined>;

function qs(q: Query | undefined): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

const seg = (id: string) => encodeURIComponent(id);

export function createClient(opts: ClientOptions) {
  const doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const base = opts.baseUrl.replace(/\/+$/, '') + '/api/v1';

  /** One call: the envelope's `data` on success (or the plain body of a 202), an ApiError otherwise. */
  async function call<T>(method: string, path: string, init: { query?: Query; body?: unknown } = {}): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await doFetch(base + path + qs(init.query), { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiError(res.status, 'BAD_RESPONSE', `the hub answered ${res.status} with a body that is not JSON`);
    }
    if (!res.ok) throw new ApiError(res.status, String(json?.code ?? res.status), String(json?.message ?? res.statusText));
    if (res.status === 202) return json as T; // the spec's plain (unenveloped) 202 bodies
    if (json && typeof json === 'object' && 'code' in json && 'data' in json) return json.data as T;
    return json as T;
  }

  return {
    market: {
      list: (q: MarketParams = {}) => call<AgentPage>('GET', '/agents', { query: q }),
      featured: () => call<Agent[]>('GET', '/agents/featured'),
      facets: () => call<AgentFacets>('GET', '/agents/facets'),
      get: (id: string) => call<Agent>('GET', `/agents/${seg(id)}`),
      favorite: (id: string, on: boolean) => call<FavoriteState>(on ? 'POST' : 'DELETE', `/agents/${seg(id)}/favorite`),
    },
    me: () => call<User>('GET', '/me'),
    agents: {
      mine: (q: MineParams = {}) => call<MyAgentPage>('GET', '/agents/mine', { query: q }),
    },
    sessions: {
      list: (q: SessionParams = {}) => call<Sessions>('GET', '/sessions', { query: q }),
      get: (id: string, q: { includeMessages?: boolean; messageLimit?: number } = {}) => call<SessionView>('GET', `/sessions/${seg(id)}`, { query: q }),
      /** 201 with the session; with `content`, the 202 of its first message. */
      create: (body: NewSession) => call<SessionView | AcceptedRun>('POST', '/sessions', { body }),
      send: (id: string, body: NewMessage) => call<AcceptedRun>('POST', `/sessions/${seg(id)}/messages`, { body }),
      messages: (id: string, q: HistoryParams = {}) => call<SessionHistory>('GET', `/sessions/${seg(id)}/messages`, { query: q }),
      abort: (id: string) => call<Static<typeof Aborted>>('POST', `/sessions/${seg(id)}/abort`),
      cost: (id: string) => call<Static<typeof Cost>>('GET', `/sessions/${seg(id)}/cost`),
      queue: (id: string) => call<Static<typeof Queue>>('GET', `/sessions/${seg(id)}/queue`),
    },
    hosts: {
      list: () => call<Hosts>('GET', '/hosts'),
      get: (id: string) => call<HostView>('GET', `/hosts/${seg(id)}`),
      pairKey: () => call<PairKey>('POST', '/hosts/pair-key'),
      /** Applies a model configuration to the host; null reverts to the default. */
      applyModelConfig: (id: string, configId: string | null) => call<AppliedBinding>('POST', `/hosts/${seg(id)}/model-config`, { body: { configId } }),
    },
    // ---- model configurations ----
    modelConfigs: {
      list: () => call<ModelConfigs>('GET', '/model-configs'),
      get: (id: string) => call<ModelConfig>('GET', `/model-configs/${seg(id)}`),
      create: (body: NewModelConfig) => call<ModelConfig>('POST', '/model-configs', { body }),
      update: (id: string, body: ModelConfigPatch) => call<ModelConfig>('PATCH', `/model-configs/${seg(id)}`, { body }),
      remove: (id: string) => call<{ deleted: true }>('DELETE', `/model-configs/${seg(id)}`),
      test: (body: ModelTestInput) => call<ModelTest>('POST', '/model-configs/test', { body }),
    },
    // ---- account: balance, ledger, trends, plan, keys, bindings, redemptions ----
    account: {
      balance: () => call<BalanceView>('GET', '/me/balance'),
      ledger: (q: LedgerParams = {}) => call<Ledger>('GET', '/me/ledger', { query: q }),
      trends: (q: TrendParams = {}) => call<Trends>('GET', '/me/trends', { query: q }),
      plan: () => call<MyPlan>('GET', '/me/plan'),
      bindings: () => call<Bindings>('GET', '/me/bindings'),
      keys: () => call<ApiKeys>('GET', '/me/keys'),
      createKey: (name: string) => call<CreatedApiKey>('POST', '/me/keys', { body: { name } }),
      refreshKey: (id: string) => call<CreatedApiKey>('POST', `/me/keys/${seg(id)}/refresh`),
      deleteKey: (id: string) => call<Static<typeof KeyDeleted>>('DELETE', `/me/keys/${seg(id)}`),
      redeems: (q: RedeemParams = {}) => call<Redemptions>('GET', '/me/redeems', { query: q }),
    },
    // ---- billing: plans, token packs, orders, store ----
    billing: {
      plans: () => call<PlanList>('GET', '/plans'),
      tokenPacks: () => call<TokenPackList>('GET', '/token-packs'),
      buyTokenPack: (body: TokenPackOrder) => call<Order>('POST', '/orders/token-pack', { body }),
      orders: (q: OrderParams = {}) => call<Orders>('GET', '/orders', { query: q }),
      order: (id: string) => call<Order>('GET', `/orders/${seg(id)}`),
      cancelOrder: (id: string) => call<Order>('POST', `/orders/${seg(id)}/cancel`),
      products: () => call<ProductList>('GET', '/store/products'),
      redeem: (productId: string, qty?: number) => call<Redemption>('POST', '/store/redeem', { body: { productId, qty } }),
    },
    // ---- administration (role admin) ----
    admin: {
      pendingAgents: (q: PageParams = {}) => call<ReviewPage>('GET', '/admin/agents/pending', { query: q }),
      approveAgent: (id: string) => call<ReviewAgent>('POST', `/admin/agents/${seg(id)}/approve`),
      rejectAgent: (id: string, reason: string) => call<ReviewAgent>('POST', `/admin/agents/${seg(id)}/reject`, { body: { reason } }),
      users: (q: { keyword?: string; role?: 'user' | 'admin'; page?: number; pageSize?: number } = {}) => call<Users>('GET', '/admin/users', { query: q }),
      redeems: (q: AdminRedeemParams = {}) => call<AdminRedemptions>('GET', '/admin/redeems', { query: q }),
      deliverRedeem: (id: string, cards: Array<{ no?: string; pwd?: string }>) => call<AdminRedemption>('POST', `/admin/redeems/${seg(id)}/deliver`, { body: { cards } }),
      rejectRedeem: (id: string, reason: string) => call<AdminRedemption>('POST', `/admin/redeems/${seg(id)}/reject`, { body: { reason } }),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
