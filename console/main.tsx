// The Agent Hub console: Market (anonymous), Sign in, Invitations, Sessions, My agents, Hosts, Models, Account, Administration (admins). Talks to the hub only through src/client.
import { render, type VNode } from 'preact';
import { useState } from 'preact/hooks';
import './style.css';
import { go, usePath } from './router.js';
import { client, isBrowserLogin, setToken, token } from './session.js';
import { Callback } from './callback.js';
import { A, Loading } from './ui.js';
import { AgentPage, Market } from './market.js';
import { SignIn } from './signin.js';
import { InvitePage } from './invite.js';
import { Sessions } from './sessions.js';
import { ChatPage } from './chat.js';
import { MyAgents } from './agents/list.js';
import { ManageAgent, NewAgent } from './agents/page.js';
import { Hosts } from './hosts.js';
import { ModelConfigs } from './models/page.js';
import { Account } from './account/page.js';
import { Admin } from './admin/page.js';
import { useLoad } from './use-load.js';

/** Pages that need a signed-in user (the first path segment). */
const PRIVATE = new Set(['sessions', 'agents', 'hosts', 'models', 'account', 'admin']);

const notFound = <section><h1>Not found</h1><p>No page here. <A href="/">Go to the market</A>.</p></section>;

/** The page for a path segment's id; Not found when the segment is not valid percent-encoding (decoding threw: a blank console). */
function withId(raw: string, page: (id: string) => VNode): VNode {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return notFound;
  }
  return page(id);
}

function Page(p: { path: string; signedIn: boolean; isAdmin: boolean | undefined; onSignedIn: () => void; onSignedOut: () => void }) {
  const m = p.path.match(/^\/(market|sessions)\/([^/]+)\/?$/);
  if (p.path === '/' || p.path === '/market' || p.path === '/market/') return <Market />;
  if (m?.[1] === 'market') return withId(m[2], (id) => <AgentPage id={id} />);
  if (p.path === '/auth/callback') return <Callback onSignedIn={p.onSignedIn} />;
  if (p.path === '/signin') return <SignIn onSignedIn={p.onSignedIn} />;
  const invite = p.path.match(/^\/invites\/([^/]+)\/?$/);
  if (invite) return withId(invite[1], (token) => <InvitePage token={token} />);
  if (!p.signedIn && PRIVATE.has(p.path.split('/')[1])) return <SignIn onSignedIn={p.onSignedIn} />;
  const top = p.path.replace(/\/+$/, '');
  if (top === '/models') return <ModelConfigs />;
  if (top === '/account') return <Account onSignedOut={p.onSignedOut} />;
  if (top === '/admin') return p.isAdmin === undefined ? <Loading /> : p.isAdmin ? <Admin /> : <section><h1>Administration</h1><p class="error" role="alert">Administrators only.</p></section>;
  if (p.path === '/sessions' || p.path === '/sessions/') return <Sessions />;
  if (m?.[1] === 'sessions') return withId(m[2], (id) => <ChatPage id={id} />);
  if (p.path === '/agents' || p.path === '/agents/') return <MyAgents />;
  if (p.path === '/agents/new') return <NewAgent />;
  const agent = p.path.match(/^\/agents\/([^/]+)\/?$/);
  if (agent) return withId(agent[1], (id) => <ManageAgent id={id} />);
  if (p.path === '/hosts' || p.path === '/hosts/') return <Hosts />;
  return notFound;
}

/** The header's Sign in: back to the page it was pressed on (not the market's front, the form itself nor the provider's return). */
function signInHref(path: string): string {
  return ['/', '/signin', '/auth/callback'].includes(path) ? '/signin' : `/signin?from=${encodeURIComponent(path)}`;
}

function App() {
  const path = usePath();
  const [signedIn, setSignedIn] = useState(() => token() !== undefined);
  // The role decides whether the Administration link shows (the API enforces it either way).
  const me = useLoad(() => (signedIn ? client().me() : Promise.resolve(undefined)), [signedIn]);
  const isAdmin = me.data ? me.data.role === 'admin' : undefined;
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
          {signedIn && <A href="/agents">My agents</A>}
          {signedIn && <A href="/hosts">Hosts</A>}
          {signedIn && <A href="/models">Models</A>}
          {signedIn && <A href="/account">Account</A>}
          {signedIn && isAdmin && <A href="/admin">Administration</A>}
          <span class="spacer" />
          {signedIn ? <button type="button" onClick={signOut}>Sign out</button> : <A href={signInHref(path)}>Sign in</A>}
        </nav>
      </header>
      <main>
        <Page path={path} signedIn={signedIn} isAdmin={isAdmin} onSignedIn={() => setSignedIn(true)} onSignedOut={signOut} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
