// The typed client of the hub's API, for the console and the tests. Request and
// response types are the route schemas themselves (type-only imports: nothing of
// the server reaches a bundle), so a shape is declared once, where it is checked.
import type { Static } from 'typebox';
import type { MarketAgent, OwnerAgent, PageOf, Facets, Favorite } from '../agents/view-schemas.js';
import type { MarketQuery, MineQuery } from '../agents/schemas.js';
import type { Session, SessionPage, History, Accepted, Aborted, Cancelled, Cost, Message, Queue } from '../sessions/view-schemas.js';
import type { CreateBody, SendBody, ListQuery, HistoryQuery, PatchBody as SessionPatchBody } from '../sessions/routes.js';
import type { UserCreate, UserList } from '../accounts/routes.js';
import type { Host, HostList, PairKey as PairKeySchema } from '../hosts/view-schemas.js';
import type { Paired } from '../hosts/view-schemas.js';
import type { User as UserSchema } from '../accounts/view-schemas.js';
import type * as AccountViews from '../accounts/view-schemas.js';
import type * as BillingViews from '../billing/view-schemas.js';
import type * as BillingQueries from '../billing/schemas.js';
import type * as AgentViews from '../agents/view-schemas.js';
// My agents and hosts pages (console/agents, console/hosts.tsx).
import type { AgentWrite, AiFillBody, PageQuery } from '../agents/schemas.js';
import type { AvailableHosts as AvailableHostsSchema, HostDeleted } from '../hosts/view-schemas.js';
import type { DirsResult, Engine, ModelTestResult } from '../../host-protocol/frames.js';
// Model configurations (console/models).
import type { ModelConfigView, ModelConfigList, Applied, Binding } from '../model-configs/view-schemas.js';
import type { Create as McCreate, Patch as McPatch, Test as McTest } from '../model-configs/routes.js';
// Administrator's agent review list and the health check (tests of issue 13).
import type { AdminListQuery } from '../agents/schemas.js';
import type { HealthBody } from '../server/health.js';

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
// My agents and hosts pages.
export type AgentWriteBody = Body<typeof AgentWrite>;
export type Invites = AgentInvites;
export type AgentDraft = AiFillDraft;
export type AiFillRequest = Body<typeof AiFillBody>;
export type AvailableHost = Static<typeof AvailableHostsSchema>[number];
export type Directories = Static<typeof DirsResult>;
export type HostEngine = Static<typeof Engine>;

// ---------- accounts: keys, login, bindings ----------
export type ApiKeys = Static<typeof AccountViews.ApiKeyList>;
export type NewApiKey = Static<typeof AccountViews.NewApiKey>;
export type LoginStart = Static<typeof AccountViews.LoginStart>;
export type LoginDone = Static<typeof AccountViews.LoginDone>;
export type LoginTokens = Static<typeof AccountViews.LoginTokens>;
export type Bindings = Static<typeof AccountViews.Bindings>;
export type ChatappAttempt = Static<typeof AccountViews.ChatappAttempt>;
export type ChatappAttemptState = Static<typeof AccountViews.ChatappAttemptState>;
export type ChatappBinding = Static<typeof AccountViews.ChatappBinding>;
export type CodeSent = Static<typeof AccountViews.CodeSent>;

// ---------- billing ----------
export type Balance = Static<typeof BillingViews.Balance>;
export type LedgerPage = Static<typeof BillingViews.LedgerPage>;
export type Trends = Static<typeof BillingViews.Trends>;
export type MyPlan = Static<typeof BillingViews.MyPlan>;
export type Plans = Static<typeof BillingViews.Plans>;
export type TokenPacks = Static<typeof BillingViews.TokenPacks>;
export type Products = Static<typeof BillingViews.Products>;
export type Order = Static<typeof BillingViews.Order>;
export type OrderPage = Static<typeof BillingViews.OrderPage>;
export type Redemption = Static<typeof BillingViews.Redemption>;
export type RedemptionPage = Static<typeof BillingViews.RedemptionPage>;
export type Cards = Static<typeof BillingViews.Cards>;
export type LedgerParams = Input<typeof BillingQueries.LedgerQuery>;
export type TrendsParams = Input<typeof BillingQueries.TrendsQuery>;
export type OrdersParams = Input<typeof BillingQueries.OrdersQuery>;
export type RedeemsParams = Input<typeof BillingQueries.RedeemsQuery>;
export type TokenPackOrder = Body<typeof BillingQueries.TokenPackOrder>;
export type PlanOrder = Body<typeof BillingQueries.PlanOrder>;

// ---------- agents: owner's statistics, ai-fill, sharing ----------
export type AgentOverview = Static<typeof AgentViews.Overview>;
export type AgentStatsSummary = Static<typeof AgentViews.StatsSummary>;
export type AgentStats = Static<typeof AgentViews.AgentStats>;
export type AiFillDraft = Static<typeof AgentViews.AiFill>;
export type ShareToken = Static<typeof AgentViews.ShareToken>;
export type AgentInvites = Static<typeof AgentViews.Invites>;
export type Invitation = Static<typeof AgentViews.Invitation>;
export type InviteDecision = Static<typeof AgentViews.Decided>;

// ---------- model configurations ----------
export type ModelConfig = Static<typeof ModelConfigView>;
export type ModelConfigs = Static<typeof ModelConfigList>;
export type NewModelConfig = Body<typeof McCreate>;
export type ModelConfigPatch = Body<typeof McPatch>;
export type ModelTestInput = Body<typeof McTest>;
export type ModelTest = Static<typeof ModelTestResult>;
export type HostBinding = Static<typeof Binding>;
export type AppliedBinding = Static<typeof Applied>;

// ---------- names the account and administration pages use ----------
export type ApiKey = ApiKeys['items'][number];
export type CreatedApiKey = NewApiKey;
export type BalanceView = Balance;
export type Ledger = LedgerPage;
export type TrendParams = TrendsParams;
export type PlanList = Plans;
export type TokenPackList = TokenPacks;
export type Orders = OrderPage;
export type OrderParams = OrdersParams;
export type ProductList = Products;
export type Redemptions = RedemptionPage;
export type RedeemParams = RedeemsParams;
export type ReviewAgent = Static<typeof AgentViews.ReviewAgent>;
export type ReviewPage = Static<ReturnType<typeof PageOf<typeof AgentViews.ReviewAgent>>>;
export type PageParams = Input<typeof PageQuery>;
export type Users = Static<typeof AccountViews.UserPage>;
export type AdminRedemption = Static<typeof BillingViews.AdminRedemption>;
export type AdminRedemptions = Static<typeof BillingViews.AdminRedemptionPage>;
export type AdminRedeemParams = Input<typeof BillingQueries.AdminRedeemsQuery>;
export type NewUserBody = Body<typeof UserCreate>;
export type NewUser = Static<typeof AccountViews.NewUser>;
export type UsersParams = Input<typeof UserList>;
export type UsersSummary = Static<typeof AccountViews.UsersSummary>;
export type RedeemsSummary = Static<typeof BillingViews.RedeemsSummary>;
export type UserPlanBody = Body<typeof BillingQueries.UserPlanBody>;
export type Granted = Static<typeof BillingViews.Granted>;
export type SessionPatch = Body<typeof SessionPatchBody>;

// ---------- sessions: chat view ----------
export type SessionMessage = Static<typeof Message>;
export type SessionQueue = Static<typeof Queue>;
export type SessionCost = Static<typeof Cost>;
export type SignInProvider = Static<typeof AccountViews.Providers>['items'][number];

// ---------- administrator's agent review; health ----------
export type ReviewSummary = Static<typeof AgentViews.ReviewSummary>;
export type AdminAgentsParams = Input<typeof AdminListQuery>;
/** The plain (unenveloped) health answer; a 503 (degraded, draining) is an ApiError. */
export type Health = Static<typeof HealthBody>;

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
    health: () => call<Health>('GET', '/health'),
    agents: {
      mine: (q: MineParams = {}) => call<MyAgentPage>('GET', '/agents/mine', { query: q }),
      // My agents page: create/edit/submit/enable, stats, sharing, ai-fill.
      create: (body: AgentWriteBody) => call<MyAgent>('POST', '/agents', { body }),
      manage: (id: string) => call<MyAgent>('GET', `/agents/${seg(id)}/manage`),
      update: (id: string, body: AgentWriteBody) => call<MyAgent>('PATCH', `/agents/${seg(id)}`, { body }),
      /** 204: resolves with undefined. */
      remove: (id: string) => call<undefined>('DELETE', `/agents/${seg(id)}`),
      stats: (id: string) => call<AgentStats>('GET', `/agents/${seg(id)}/stats`),
      availableHosts: () => call<AvailableHost[]>('GET', '/agents/available-hosts'),
      aiFill: (body: AiFillRequest) => call<AgentDraft>('POST', '/agents/ai-fill', { body }),
      shareLink: (id: string) => call<ShareToken>('GET', `/agents/${seg(id)}/share-link`),
      refreshShareLink: (id: string) => call<ShareToken>('POST', `/agents/${seg(id)}/share-link/refresh`),
      invites: (id: string) => call<Invites>('GET', `/agents/${seg(id)}/invites`),
      refreshInvite: (id: string) => call<ShareToken>('POST', `/agents/${seg(id)}/invites/refresh`),
      removeMember: (id: string, userId: string) => call<Static<typeof AgentViews.MemberRemoved>>('DELETE', `/agents/${seg(id)}/invites/${seg(userId)}`),
      overview: () => call<AgentOverview>('GET', '/agents/overview'),
      statsSummary: () => call<AgentStatsSummary>('GET', '/agents/stats/summary'),
    },
    // ---------- accounts: keys, login, bindings ----------
    keys: {
      list: () => call<ApiKeys>('GET', '/me/keys'),
      create: (name: string) => call<NewApiKey>('POST', '/me/keys', { body: { name } }),
      refresh: (id: string) => call<NewApiKey>('POST', `/me/keys/${seg(id)}/refresh`),
      remove: (id: string) => call<{ deleted: true }>('DELETE', `/me/keys/${seg(id)}`),
    },
    auth: {
      providers: () => call<Static<typeof AccountViews.Providers>>('GET', '/auth/providers'),
      /** Starts a login: the provider's authorize URL; `from` is where the console returns after it. */
      login: (from?: string) => call<LoginStart>('GET', '/auth/login', { query: { from } }),
      callback: (code: string, state: string) => call<LoginDone>('POST', '/auth/callback', { body: { code, state } }),
      refresh: (refreshToken: string) => call<LoginTokens>('POST', '/auth/refresh', { body: { refresh_token: refreshToken } }),
      logout: () => call<{ loggedOut: true }>('POST', '/auth/logout'),
      /** Starts linking the provider's identity to the signed-in account (the same authorize URL as a login). */
      linkIdentity: (provider: string) => call<LoginStart>('POST', `/me/idem/${seg(provider)}/link`),
      unlinkIdentity: (provider: string) => call<{ deleted: true }>('DELETE', `/me/idem/${seg(provider)}`),
      /** The provider's logout address; with a login's access token it also ends that login (a JSON answer, not a redirect). */
      ssoLogout: () => call<Static<typeof AccountViews.SsoLogout>>('GET', '/auth/sso-logout'),
    },
    bindings: {
      get: () => call<Bindings>('GET', '/me/bindings'),
      sendPhoneCode: (phone: string, countryCode?: string) => call<CodeSent>('POST', '/me/phone/send-code', { body: { phone, countryCode } }),
      /** `verifyToken`: a fresh code sent to the phone bound now, needed to bind another number over it. */
      bindPhone: (phone: string, code: string, countryCode?: string, verifyToken?: string) => call<Bindings>('POST', '/me/phone/bind', { body: { phone, code, countryCode, verifyToken } }),
      chatappAttempt: () => call<ChatappAttempt>('POST', '/me/chatapp/binding-attempts'),
      chatappAttemptState: (id: string) => call<ChatappAttemptState>('GET', `/me/chatapp/binding-attempts/${seg(id)}`),
      chatapp: () => call<ChatappBinding>('GET', '/me/chatapp/binding'),
      unbindChatapp: () => call<{ deleted: true }>('DELETE', '/me/chatapp/binding'),
    },
    // ---------- billing ----------
    billing: {
      balance: () => call<Balance>('GET', '/me/balance'),
      ledger: (q: LedgerParams = {}) => call<LedgerPage>('GET', '/me/ledger', { query: q }),
      trends: (q: TrendsParams = {}) => call<Trends>('GET', '/me/trends', { query: q }),
      myPlan: () => call<MyPlan>('GET', '/me/plan'),
      plans: () => call<Plans>('GET', '/plans'),
      tokenPacks: () => call<TokenPacks>('GET', '/token-packs'),
      products: () => call<Products>('GET', '/store/products'),
      buyTokenPack: (body: TokenPackOrder) => call<Order>('POST', '/orders/token-pack', { body }),
      buyPlan: (body: PlanOrder) => call<Order>('POST', '/orders/plan', { body }),
      orders: (q: OrdersParams = {}) => call<OrderPage>('GET', '/orders', { query: q }),
      order: (id: string) => call<Order>('GET', `/orders/${seg(id)}`),
      cancelOrder: (id: string) => call<Order>('POST', `/orders/${seg(id)}/cancel`),
      redeem: (productId: string, qty?: number) => call<Redemption>('POST', '/store/redeem', { body: { productId, qty } }),
      redeems: (q: RedeemsParams = {}) => call<RedemptionPage>('GET', '/me/redeems', { query: q }),
      redemption: (id: string) => call<Redemption>('GET', `/me/redeems/${seg(id)}`),
      markRead: (id: string) => call<Redemption>('PATCH', `/me/redeems/${seg(id)}/read`),
      cards: (id: string, verifyToken?: string) => call<Cards>('POST', `/me/redeems/${seg(id)}/cards`, { body: { verifyToken } }),
    },
    invites: {
      get: (token: string) => call<Invitation>('GET', `/invites/${seg(token)}`),
      decide: (token: string, accept: boolean) => call<InviteDecision>('POST', `/invites/${seg(token)}/decide`, { body: { accept } }),
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
      update: (id: string, body: SessionPatch) => call<SessionView>('PATCH', `/sessions/${seg(id)}`, { body }),
      remove: (id: string) => call<{ deleted: true }>('DELETE', `/sessions/${seg(id)}`),
    },
    // Browser sign-in through the hub's identity provider (console/signin.tsx, console/callback.tsx).
    // Chat view (console/chat.tsx): a waiting message is cancelled by its task id; streams are in ./sse.ts.
    chat: {
      cancelQueued: (id: string, taskId: string) => call<Static<typeof Cancelled>>('DELETE', `/sessions/${seg(id)}/queue/${seg(taskId)}`),
    },
    hosts: {
      list: () => call<Hosts>('GET', '/hosts'),
      get: (id: string) => call<HostView>('GET', `/hosts/${seg(id)}`),
      pairKey: () => call<PairKey>('POST', '/hosts/pair-key'),
      // Hosts page and the agent form's directory browser.
      remove: (id: string) => call<Static<typeof HostDeleted>>('DELETE', `/hosts/${seg(id)}`),
      engines: (id: string) => call<HostEngine[]>('GET', `/hosts/${seg(id)}/engines`),
      refresh: (id: string) => call<HostView>('POST', `/hosts/${seg(id)}/refresh`),
      setRemark: (id: string, remark: string | null) => call<HostView>('PATCH', `/hosts/${seg(id)}/remark`, { body: { remark } }),
      directories: (id: string, path = '') => call<Directories>('GET', `/hosts/${seg(id)}/directories`, { query: { path } }),
      /** Applies a model configuration to the host; null reverts to the default. */
      applyModelConfig: (id: string, configId: string | null) => call<AppliedBinding>('POST', `/hosts/${seg(id)}/model-config`, { body: { configId } }),
      /** The host CLI's pairing: a pair key (no bearer) for the host's id and its credential, shown once. */
      pair: (pairKey: string, name?: string) => call<Static<typeof Paired>>('POST', '/hosts/pair', { body: { pairKey, name } }),
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
    // ---- administration (role admin) ----
    admin: {
      pendingAgents: (q: PageParams = {}) => call<ReviewPage>('GET', '/admin/agents/pending', { query: q }),
      /** `version`: the one reviewed; 409 when the agent changed since (without it, whatever is current). */
      approveAgent: (id: string, version?: number) => call<ReviewAgent>('POST', `/admin/agents/${seg(id)}/approve`, version === undefined ? {} : { body: { version } }),
      rejectAgent: (id: string, reason: string, version?: number) => call<ReviewAgent>('POST', `/admin/agents/${seg(id)}/reject`, { body: { reason, version } }),
      users: (q: UsersParams = {}) => call<Users>('GET', '/admin/users', { query: q }),
      usersSummary: () => call<UsersSummary>('GET', '/admin/users/summary'),
      /** 201: the user and its first API key, shown once. */
      createUser: (body: NewUserBody) => call<NewUser>('POST', '/admin/users', { body }),
      deleteUser: (id: string) => call<Static<typeof AccountViews.UserDeleted>>('DELETE', `/admin/users/${seg(id)}`),
      /** Sets or clears a user's plan (planId null) and its end (planExpireAt in ms, null for none). */
      setPlan: (id: string, body: UserPlanBody) => call<User>('PATCH', `/admin/users/${seg(id)}/plan`, { body }),
      grantTokens: (id: string, qty?: number) => call<Granted>('POST', `/admin/users/${seg(id)}/grant-token`, { body: qty === undefined ? null : { qty } }),
      confirmPayment: (orderId: string, paymentRef?: string) => call<Order>('POST', `/admin/orders/${seg(orderId)}/confirm-payment`, { body: { paymentRef } }),
      redeemsSummary: () => call<RedeemsSummary>('GET', '/admin/redeems/summary'),
      redemption: (id: string) => call<AdminRedemption>('GET', `/admin/redeems/${seg(id)}`),
      redemptionCards: (id: string, verifyToken?: string) => call<Cards>('POST', `/admin/redeems/${seg(id)}/cards`, { body: { verifyToken } }),
      redeems: (q: AdminRedeemParams = {}) => call<AdminRedemptions>('GET', '/admin/redeems', { query: q }),
      deliverRedeem: (id: string, cards: Array<{ no?: string; pwd?: string }>) => call<AdminRedemption>('POST', `/admin/redeems/${seg(id)}/deliver`, { body: { cards } }),
      rejectRedeem: (id: string, reason: string) => call<AdminRedemption>('POST', `/admin/redeems/${seg(id)}/reject`, { body: { reason } }),
      agentsSummary: () => call<ReviewSummary>('GET', '/admin/agents/summary'),
      agents: (q: AdminAgentsParams = {}) => call<ReviewPage>('GET', '/admin/agents', { query: q }),
      reviewAgent: (id: string) => call<ReviewAgent>('GET', `/admin/agents/${seg(id)}/review`),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
