// The signed-in state: the API key lives in sessionStorage (gone with the tab),
// and every call goes through the typed client.
import { createClient, type Client } from '../src/client/index.js';

const KEY = 'agent-hub.apiKey';

export function token(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function setToken(t: string | undefined): void {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

/** A client for the page's own origin, with the key when signed in. */
export function client(): Client {
  return createClient({ baseUrl: '', token: token() });
}
