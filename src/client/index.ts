// The typed client of the hub's API, for the console and the tests. Request and
// response types are the route schemas themselves (type-only imports: nothing of
// the server reaches a bundle), so a shape is declared once, where it is checked.
import type { Static } from 'typebox';
import type { MarketAgent, OwnerAgent, PageOf, Facets, Favorite } from '../agents/view-schemas.js';
import type { MarketQuery, MineQuery } from '../agents/schemas.js';
import type { Session, SessionPage, History, Accepted, Aborted, Cancelled, Cost, Message, Queue } from '../sessions/view-schemas.js';
import type { CreateBody, SendBody, ListQuery, HistoryQuery } from '../sessions/routes.js';
import type { Host, HostList, PairKey as PairKeySchema } from '../hosts/view-schemas.js';
import type { User as UserSchema } from '../accounts/view-schemas.js';

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
export type SessionMessage = Static<typeof Message>;
export type SessionQueue = Static<typeof Queue>;
export type SessionCost = Static<typeof Cost>;

export interface SignInProvider {
  id: string;
  name: string;
}

/** What a browser login (callback, refresh) answers. */
export interface LoginTokens {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken: string;
  refreshExpiresAt: string;
  user: User;
}

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
    // Browser sign-in through the hub's identity provider (console/signin.tsx, console/callback.tsx).
    auth: {
      providers: () => call<{ items: SignInProvider[] }>('GET', '/auth/providers'),
      /** Starts a login: the provider's authorize URL; `from` is where the console returns after it. */
      login: (from?: string) => call<{ url: string; state: string; expiresAt: string }>('GET', '/auth/login', { query: { from } }),
      callback: (code: string, state: string) => call<LoginTokens & { from: string | null; linked: string | null }>('POST', '/auth/callback', { body: { code, state } }),
      refresh: (refreshToken: string) => call<LoginTokens>('POST', '/auth/refresh', { body: { refresh_token: refreshToken } }),
      logout: () => call<{ loggedOut: boolean }>('POST', '/auth/logout'),
    },
    // Chat view (console/chat.tsx): a waiting message is cancelled by its task id; streams are in ./sse.ts.
    chat: {
      cancelQueued: (id: string, taskId: string) => call<Static<typeof Cancelled>>('DELETE', `/sessions/${seg(id)}/queue/${seg(taskId)}`),
    },
    hosts: {
      list: () => call<Hosts>('GET', '/hosts'),
      get: (id: string) => call<HostView>('GET', `/hosts/${seg(id)}`),
      pairKey: () => call<PairKey>('POST', '/hosts/pair-key'),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
