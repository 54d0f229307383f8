// Sign in with an API key: checked with /me before it is kept (sessionStorage).
import { useState } from 'preact/hooks';
import { createClient } from '../src/client/index.js';
import { setToken } from './session.js';
import { go } from './router.js';
import { ErrorBox } from './ui.js';

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
      go('/sessions');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Sign in</h1>
      <form class="stack" onSubmit={submit}>
        <label>API key <input type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} /></label>
        <p class="muted">The key is kept in this tab's session storage only.</p>
        <button type="submit" disabled={busy || !key.trim()}>{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
      <ErrorBox error={error} />
    </section>
  );
}
