// One agent's page (state, controls, stats, edit form, sharing, delete) and
// the new-agent page.
import { useState } from 'preact/hooks';
import type { AgentStats, MyAgent } from '../../src/client/index.js';
import { go } from '../router.js';
import { client } from '../session.js';
import { A, ago, ErrorBox, Loading } from '../ui.js';
import { useBoundAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { AgentControls, StateBadges } from './controls.js';
import { AgentForm } from './form.js';
import { agentPath } from './list.js';
import { Sharing } from './share.js';

export function NewAgent() {
  return (
    <section>
      <p><A href="/agents">← My agents</A></p>
      <h1>New agent</h1>
      <AgentForm onSaved={(a) => go(agentPath(a.id))} />
    </section>
  );
}

export function ManageAgent(p: { id: string }) {
  const [tick, setTick] = useState(0);
  const agent = useLoad(() => client().agents.manage(p.id), [p.id, tick]);
  const stats = useLoad(() => client().agents.stats(p.id), [p.id, tick]);
  const again = () => setTick((t) => t + 1);
  if (agent.error && !agent.data) return <><p><A href="/agents">← My agents</A></p><ErrorBox error={agent.error} /></>;
  const a = agent.data;
  if (!a) return <Loading />;
  return (
    <section>
      <p><A href="/agents">← My agents</A></p>
      <div class="row spread">
        <h1>{a.displayName}</h1>
        <StateBadges a={a} />
      </div>
      <p class="muted">{a.id} · version {a.version} · {a.hostName ? `${a.hostName}${a.hostUp ? ' (online)' : ' (offline)'}` : 'no host'} · {a.engine ?? 'no engine'}{a.workDir ? ` · ${a.workDir}` : ''}</p>
      <AgentControls a={a} onChanged={again} />
      <Stats stats={stats.data} error={stats.error} />
      <h2>Edit</h2>
      <AgentForm agent={a} key={a.id} onSaved={again} />
      <Sharing agentId={a.id} />
      <Delete a={a} />
    </section>
  );
}

function Stats(p: { stats?: AgentStats; error?: unknown }) {
  const s = p.stats;
  return (
    <section aria-labelledby="stats">
      <h2 id="stats">Stats</h2>
      <ErrorBox error={p.error} />
      {!s && !p.error && <Loading />}
      {s && (
        <dl class="facts stats">
          <dt>Uses</dt><dd>{s.usageCount}</dd>
          <dt>Sessions</dt><dd>{s.sessionCount}</dd>
          <dt>Runs</dt><dd>{s.runs}</dd>
          <dt>Cost (tokens)</dt><dd>{s.cost}</dd>
          <dt>Earned</dt><dd>{s.earn}</dd>
          <dt>Favorites</dt><dd>{s.favoriteCount}</dd>
          <dt>Shared with</dt><dd>{s.sharedWith}</dd>
          <dt>Last used</dt><dd>{s.lastUsedAt ? ago(s.lastUsedAt) : 'never'}</dd>
        </dl>
      )}
    </section>
  );
}

function Delete(p: { a: MyAgent }) {
  const [confirming, setConfirming] = useState(false);
  const del = useBoundAction(async () => {
    await client().agents.remove(p.a.id);
    go('/agents');
  });
  return (
    <section aria-labelledby="danger">
      <h2 id="danger">Delete</h2>
      {confirming ? (
        <div class="row" role="group" aria-label="Confirm delete">
          <span>Delete “{p.a.displayName}” and all its sessions? This cannot be undone.</span>
          <button type="button" class="danger" disabled={del.busy} onClick={() => del.run()}>{del.busy ? 'Deleting…' : 'Delete agent'}</button>
          <button type="button" class="plain" onClick={() => setConfirming(false)}>Cancel</button>
        </div>
      ) : <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete…</button>}
      <ErrorBox error={del.error} />
    </section>
  );
}
