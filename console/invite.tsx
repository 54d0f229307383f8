// An invitation or share link opened in the browser (/invites/:token): the
// agent it leads to, and Join / Decline. Signed out, the summary shows and
// signing in comes back here (the API lets anyone read an invitation).
import { useState } from 'preact/hooks';
import type { InviteDecision, SessionView } from '../src/client/index.js';
import { client, token } from './session.js';
import { go } from './router.js';
import { A, ErrorBox, Loading } from './ui.js';
import { useBoundAction } from './use-action.js';
import { useLoad } from './use-load.js';

export function InvitePage(p: { token: string }) {
  const inv = useLoad(() => client().invites.get(p.token), [p.token]);
  const [decided, setDecided] = useState<InviteDecision>();
  const decide = useBoundAction(async (accept: boolean) => setDecided(await client().invites.decide(p.token, accept)));
  const start = useBoundAction(async (agentId: string) => {
    const s = (await client().sessions.create({ agentId })) as SessionView;
    go(`/sessions/${encodeURIComponent(s.id)}`);
  });
  if (inv.error) return <section><h1>Invitation</h1><ErrorBox error={inv.error} /><p><A href="/">Go to the market</A></p></section>;
  const i = inv.data;
  if (!i) return <Loading />;
  const a = i.agent;
  const agentHref = `/market/${encodeURIComponent(a.id)}`;
  const joined = decided ? decided.sharedWithMe : i.joined;
  return (
    <article aria-labelledby="invite">
      <h1 id="invite">{i.ownerName} invites you to {a.displayName || a.name}</h1>
      <p>{a.description || <span class="muted">No description.</span>}</p>
      <dl class="facts">
        <dt>Owner</dt><dd>{i.ownerName}</dd>
        <dt>Category</dt><dd>{a.category || '—'}</dd>
        <dt>Engine</dt><dd>{a.engine ?? '—'}</dd>
        <dt>Pricing</dt><dd>{a.pricing}</dd>
        <dt>Through</dt><dd>{i.kind === 'link' ? 'a share link' : 'an invitation (works once)'}</dd>
      </dl>
      {!token() ? (
        <p><A href={`/signin?from=${encodeURIComponent(location.pathname)}`}>Sign in</A> to join this agent; you come back here afterwards.</p>
      ) : i.isOwner ? (
        <p>You own this agent. <A href={`/agents/${encodeURIComponent(a.id)}`}>Manage it</A>.</p>
      ) : joined ? (
        <div class="stack">
          <p role="status">You have joined: the agent is shared with you.</p>
          <div class="row">
            <button type="button" disabled={start.busy} onClick={() => start.run(a.id)}>{start.busy ? 'Starting…' : 'Start a session'}</button>
            <A href={agentHref}>Open the agent's page</A>
          </div>
          <ErrorBox error={start.error} />
        </div>
      ) : decided && !decided.accepted ? (
        <p role="status">Declined. <A href="/">Go to the market</A>.</p>
      ) : (
        <div class="row">
          <button type="button" disabled={decide.busy} onClick={() => decide.run(true)}>{decide.busy ? 'Joining…' : 'Join'}</button>
          <button type="button" class="plain" disabled={decide.busy} onClick={() => decide.run(false)}>Decline</button>
        </div>
      )}
      <ErrorBox error={decide.error} />
    </article>
  );
}
