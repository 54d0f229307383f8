// Sharing: the agent's multi-use share link, its single-use invitation, and
// the members who joined through either (removable).
import { useState } from 'preact/hooks';
import { client } from '../session.js';
import { CopyButton, Empty, ErrorBox, Loading } from '../ui.js';
import { useBoundAction } from '../use-action.js';
import { useLoad } from '../use-load.js';

// The console's invitation page, not the API path the hub answers (`url`): opened in a browser it shows the agent and Join / Decline.
const full = (token: string) => `${location.origin}/invites/${encodeURIComponent(token)}`;

export function Sharing(p: { agentId: string }) {
  const [tick, setTick] = useState(0);
  const link = useLoad(() => client().agents.shareLink(p.agentId), [p.agentId, tick]);
  const invites = useLoad(() => client().agents.invites(p.agentId), [p.agentId, tick]);
  const again = () => setTick((t) => t + 1);
  // Each asks first (a link or invitation already sent stops working; a member loses the agent), and
  // reads the sharing again refused or not: a member may have left, or another tab replaced the link.
  const asked = (question: string, act: () => Promise<unknown>) => async () => {
    if (!confirm(question)) return;
    try {
      await act();
    } finally {
      again();
    }
  };
  const newLink = useBoundAction(asked('Replace the share link? The current one stops working; members who joined stay.', () => client().agents.refreshShareLink(p.agentId)));
  const newInvite = useBoundAction(asked('Replace the invitation? The current one stops working.', () => client().agents.refreshInvite(p.agentId)));
  const remove = useBoundAction((userId: string, name: string) => asked(`Remove “${name}”? They lose this agent.`, () => client().agents.removeMember(p.agentId, userId))());
  return (
    <section aria-labelledby="sharing">
      <h2 id="sharing">Sharing</h2>
      <ErrorBox error={link.error ?? invites.error} />
      {(link.loading || invites.loading) && !link.data && <Loading />}
      {link.data && (
        <div class="stack">
          <p>Share link (anyone holding it may join; a new link stops the old one):</p>
          <pre class="cmd"><code data-testid="share-link">{full(link.data.token)}</code></pre>
          <div class="row">
            <CopyButton text={full(link.data.token)} label="Copy link" />
            <button type="button" class="plain" disabled={newLink.busy} onClick={() => newLink.run()}>{newLink.busy ? 'Replacing…' : 'New link'}</button>
          </div>
          <ErrorBox error={newLink.error} />
        </div>
      )}
      {invites.data && (
        <div class="stack">
          <p>Invitation (works once, then a new one is made):</p>
          <pre class="cmd"><code data-testid="invite-link">{full(invites.data.token)}</code></pre>
          <div class="row">
            <CopyButton text={full(invites.data.token)} label="Copy invitation" />
            <button type="button" class="plain" disabled={newInvite.busy} onClick={() => newInvite.run()}>{newInvite.busy ? 'Replacing…' : 'New invitation'}</button>
          </div>
          <ErrorBox error={newInvite.error} />
          <h3>Members ({invites.data.total})</h3>
          {invites.data.items.length === 0 ? <Empty>Nobody has joined yet.</Empty> : (
            <ul class="rows">
              {invites.data.items.map((m) => (
                <li key={m.userId} class="row spread">
                  <span>{m.name} <span class="muted">· via {m.via === 'link' ? 'share link' : 'invitation'} · {new Date(m.joinedAt).toLocaleDateString()}</span></span>
                  <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run(m.userId, m.name)}>Remove</button>
                </li>
              ))}
            </ul>
          )}
          <ErrorBox error={remove.error} />
        </div>
      )}
    </section>
  );
}
