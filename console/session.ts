// The signed-in state: the bearer (an API key, or the access token of a
// browser login) lives in sessionStorage (gone with the tab), and every call
// goes through the typed client. A browser login also keeps its refresh
// token there: a call answered 401 is retried once after a refresh.
import { createClient, type Client } from '../src/client/index.js';

const KEY = 'agent-hub.apiKey';
const REFRESH = 'agent-hub.refreshToken';

function read(k: string): string | undefined {
  try {
    return sessionStorage.getItem(k) ?? undefined;
  } catch {
    return undefined;
  }
}

function write(k: string, v: string | undefined): void {
  if (v) sessionStorage.setItem(k, v);
  else sessionStorage.removeItem(k);
}

export function token(): string | undefined {
  return read(KEY);
}

/** Signs in with an API key (or signs out with undefined): any browser login's refresh token goes. */
export function setToken(t: string | undefined): void {
  write(KEY, t);
  write(REFRESH, undefined);
}

/** Signs in with a browser login's tokens. */
export function setLogin(accessToken: string, refreshToken: string): void {
  write(KEY, accessToken);
  write(REFRESH, refreshToken);
}

const LINKING = 'agent-hub.linking';

/** A link started from the Account page: /auth/callback then knows where to send an error back to. */
export function markLinking(provider: string | undefined): void {
  write(LINKING, provider);
}

/** The link under way, if any, forgotten once read (the callback spends it). */
export function takeLinking(): string | undefined {
  const p = read(LINKING);
  write(LINKING, undefined);
  return p;
}

const FLOW = 'agent-hub.flowState';

/**
 * The `state` of the sign-in or link this tab started: /auth/callback goes on only with that one, so
 * a link crafted by someone else (their own attempt's code and state) cannot sign this tab in to
 * their account (login CSRF).
 */
export function markFlow(state: string): void {
  write(FLOW, state);
}

/** The flow this tab started, if any, forgotten once read. */
export function takeFlow(): string | undefined {
  const s = read(FLOW);
  write(FLOW, undefined);
  return s;
}

export const isBrowserLogin = (): boolean => read(REFRESH) !== undefined;

let refreshing: Promise<string | undefined> | undefined;
/** One refresh at a time (the refresh token rotates: two at once would spend it twice). */
function refresh(): Promise<string | undefined> {
  const rt = read(REFRESH);
  if (!rt) return Promise.resolve(undefined);
  refreshing ??= createClient({ baseUrl: '' }).auth.refresh(rt).then(
    (t) => (setLogin(t.accessToken, t.refreshToken), t.accessToken),
    () => (setToken(undefined), undefined),
  ).finally(() => (refreshing = undefined));
  return refreshing;
}

/** fetch that renews an expired login once and retries with the new access token. */
export const authFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const sent = new Headers(init?.headers).get('Authorization');
  if (res.status !== 401 || !sent || !isBrowserLogin()) return res;
  const fresh = await refresh();
  if (!fresh) return res;
  const headers = new Headers(init?.headers);
  headers.set('Authorization', `Bearer ${fresh}`);
  return fetch(input, { ...init, headers });
};

/** A client for the page's own origin, with the bearer when signed in. */
export function client(): Client {
  return createClient({ baseUrl: '', token: token(), fetch: authFetch });
}
