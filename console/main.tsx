// The Agent Hub console: Market (anonymous), Sign in, Sessions. Talks to the hub only through src/client.
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './style.css';
import { go, usePath } from './router.js';
import { client, isBrowserLogin, setToken, token } from './session.js';
import { Callback } from './callback.js';
import { A } from './ui.js';
import { AgentPage, Market } from './market.js';
import { SignIn } from './signin.js';
import { Sessions } from './sessions.js';
import { ChatPage } from './chat.js';

function Page(p: { path: string; signedIn: boolean; onSignedIn: () => void }) {
  const m = p.path.match(/^\/(market|sessions)\/([^/]+)\/?$/);
  if (p.path === '/' || p.path === '/market' || p.path === '/market/') return <Market />;
  if (m?.[1] === 'market') return <AgentPage id={decodeURIComponent(m[2])} />;
  if (p.path === '/auth/callback') return <Callback onSignedIn={p.onSignedIn} />;
  if (p.path === '/signin') return <SignIn onSignedIn={p.onSignedIn} />;
  if (!p.signedIn && p.path.startsWith('/sessions')) return <SignIn onSignedIn={p.onSignedIn} />;
  if (p.path === '/sessions' || p.path === '/sessions/') return <Sessions />;
  if (m?.[1] === 'sessions') return <ChatPage id={decodeURIComponent(m[2])} />;
  return <section><h1>Not found</h1><p>No page here. <A href="/">Go to the market</A>.</p></section>;
}

function App() {
  const path = usePath();
  const [signedIn, setSignedIn] = useState(() => token() !== undefined);
  const signOut = async () => {
    // A browser login is ended on the hub too (its access tokens stop at once); an API key stays valid.
    if (isBrowserLogin()) await client().auth.logout().catch(() => {});
    setToken(undefined);
    setSignedIn(false);
    go('/');
  };
  return (
    <>
      <header>
        <nav aria-label="Main">
          <A href="/" class="brand">Agent Hub</A>
          <A href="/">Market</A>
          {signedIn && <A href="/sessions">Sessions</A>}
          <span class="spacer" />
          {signedIn ? <button type="button" onClick={signOut}>Sign out</button> : <A href="/signin">Sign in</A>}
        </nav>
      </header>
      <main>
        <Page path={path} signedIn={signedIn} onSignedIn={() => setSignedIn(true)} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
