// The OIDC_REDIRECT_URI target (/auth/callback): the provider sends the browser
// back here with `code` and `state`; the hub checks both and answers the login's tokens.
import { useEffect, useState } from 'preact/hooks';
import { createClient } from '../src/client/index.js';
import { client, setLogin, takeFlow, takeLinking } from './session.js';
import { go } from './router.js';
import { A, ErrorBox, Loading } from './ui.js';

const NO_CODE = 'This address is where the identity provider returns after signing in; it was opened without a code.';
const NOT_THIS_TAB = 'This sign-in was not started in this browser tab, so it was not used. Start it again from the sign-in page.';
/** OAuth's error codes (RFC 6749 §4.1.2.1, OpenID Connect §3.1.2.6) in the console's own words. */
const REFUSALS: Record<string, string> = {
  access_denied: 'the sign-in was declined',
  login_required: 'it needs you to sign in there first',
  interaction_required: 'it needs you to act there first',
  consent_required: 'it needs your consent first',
  account_selection_required: 'it needs you to choose an account there first',
  server_error: 'it had an error',
  temporarily_unavailable: 'it is unavailable for now',
};
/** The provider's refusal of this tab's sign-in: its code in fixed words, its own description only as a short, labelled detail. */
function providerRefusal(code: string, description: string | null): string {
  const detail = description ? ` (the provider's detail: ${description.slice(0, 200)})` : '';
  return `The identity provider did not sign you in: ${REFUSALS[code] ?? 'it answered with an error'}.${detail}`;
}

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
    const err = q.get('error');
    // Nothing of the address is shown before its state proves it the answer to this tab's own sign-in:
    // anyone can send a link here, and its text would read as the hub's.
    if (!state) return setError(new Error(err ? NOT_THIS_TAB : NO_CODE));
    if (sent.has(state)) return;
    if (state !== started) return setError(new Error(NOT_THIS_TAB));
    if (err) return setError(new Error(providerRefusal(err, q.get('error_description'))));
    if (!code) return setError(new Error(NO_CODE));
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
