// Sign in with an API key (checked with /me before it is kept, in sessionStorage),
// or through the hub's identity provider when it has one (returns at /auth/callback).
import { useState } from 'preact/hooks';
import { createClient } from '../src/client/index.js';
import { client, markFlow, setToken } from './session.js';
import { go } from './router.js';
import { ErrorBox } from './ui.js';
import { useLoad } from './use-load.js';

function ProviderButtons(p: { from: string }) {
  const providers = useLoad(() => client().auth.providers(), []);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const items = providers.data?.items ?? [];
  if (!items.length) return null;
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const flow = await client().auth.login(p.from);
      markFlow(flow.state);
      location.assign(flow.url);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <div class="stack providers">
      {items.map((pr) => <button type="button" key={pr.id} disabled={busy} onClick={start}>Sign in with {pr.name}</button>)}
      <ErrorBox error={error} />
      <p class="muted">or with an API key:</p>
    </div>
  );
}

/** A path of this site: not `//host` nor `/\host`, which browsers read as another site. */
const SAME_SITE = /^\/(?![/\\])\S*$/;

/**
 * Where to go once signed in: `?from=` when it is a same-site path (a page that sent here), else the
 * private page this form stands in for (a link opened in a new tab is signed out: the key lives in
 * the tab), else /sessions.
 */
function returnPath(): string {
  const from = new URLSearchParams(location.search).get('from');
  if (from && SAME_SITE.test(from)) return from;
  const here = location.pathname + location.search;
  return location.pathname !== '/signin' && SAME_SITE.test(here) ? here : '/sessions';
}

export function SignIn(p: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await createClient({ baseUrl: '', token: key.trim() }).me();
      setToken(key.trim());
      p.onSignedIn();
      go(returnPath());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Sign in</h1>
      <ProviderButtons from={returnPath()} />
      <form class="stack" onSubmit={submit}>
        <label>API key <input type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} /></label>
        <p class="muted">The key is kept in this tab's session storage only.</p>
        <button type="submit" disabled={busy || !key.trim()}>{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}
