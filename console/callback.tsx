// The OIDC_REDIRECT_URI target (/auth/callback): the provider sends the browser
// back here with `code` and `state`; the hub checks both and answers the login's tokens.
import { useEffect, useState } from 'preact/hooks';
import { createClient } from '../src/client/index.js';
import { client, setLogin, takeFlow, takeLinking } from './session.js';
import { go } from './router.js';
import { A, ErrorBox, Loading } from './ui.js';

/** Callbacks already sent: a code is single use, a second render must not spend it again. */
const sent = new Set<string>();

export function Callback(p: { onSignedIn: () => void }) {
  const [error, setError] = useState<unknown>();
  const [linking] = useState(takeLinking);
  const [started] = useState(takeFlow);
  useEffect(() => {
    const q = new URLSearchParams(location.search);
    const code = q.get('code');
    const state = q.get('state');
    if (q.get('error')) return setError(new Error(`The identity provider did not sign you in: ${q.get('error_description') || q.get('error')}`));
    if (!code || !state) return setError(new Error('This address is where the identity provider returns after signing in; it was opened without a code.'));
    if (sent.has(state)) return;
    if (state !== started) return setError(new Error('This sign-in was not started in this browser tab, so it was not used. Start it again from the sign-in page.'));
    sent.add(state);
    // A link is finished signed in (the hub takes it only from the account that started it); a
    // plain sign-in goes anonymous, so a stale bearer in this tab cannot get it refused.
    (linking ? client() : createClient({ baseUrl: '' })).auth.callback(code, state).then(
      async (r) => {
        if (r.linked) {
          // A link from the Account page: the console stays signed in as it was. The hub
          // issued a login with the answer anyway; nothing will use it, so end it now.
          await createClient({ baseUrl: '', token: r.accessToken }).auth.logout().catch(() => undefined);
          history.replaceState(null, '', '/');
          go(`/account?linked=${encodeURIComponent(r.linked)}`);
          return;
        }
        setLogin(r.accessToken, r.refreshToken);
        p.onSignedIn();
        // Replace: back must not return to a spent code.
        history.replaceState(null, '', '/');
        go(r.from || '/sessions');
      },
      setError,
    );
  }, []);
  return (
    <section>
      <h1>{linking ? 'Linking your identity…' : 'Signing in…'}</h1>
      {error ? <><ErrorBox error={error} /><p>{linking ? <A href="/account">Back to the account</A> : <A href="/signin">Try again</A>}</p></> : <Loading />}
    </section>
  );
}
