// The user's hosts with the model configuration each uses and its sync state, polled
// every 2 s while the page is visible; apply a configuration or revert to the default.
import { useState } from 'preact/hooks';
import type { HostBinding, HostView, ModelConfig } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, Progress } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useEvery, useTick } from '../use-poll.js';

const POLL_MS = 2000;

function HostRow(p: { host: HostView; configs: ModelConfig[]; onChanged: () => void }) {
  const h = p.host;
  const b = h.modelConfig as HostBinding | null;
  const [picked, setPick] = useState('');
  // The configurations may arrive after the hosts: default to the bound one, else the first.
  const pick = p.configs.some((c) => c.id === picked) ? picked : (b?.configId ?? p.configs[0]?.id ?? '');
  const act = useAction();
  const apply = async (configId: string | null) => {
    await act.run(() => client().hosts.applyModelConfig(h.id, configId));
    // Refused too: a refusal mostly means the hub moved on elsewhere (the configuration deleted), which the lists then show.
    p.onChanged();
  };
  return (
    <tr data-host={h.id}>
      <td>{h.name}<div class="muted">{h.status}{h.running ? ` · ${h.running} running` : ''}</div></td>
      <td>
        {b ? <>{b.name} <span class={`state ${b.status}`} data-sync>{b.status}</span>{b.lastError && <div class="error">{b.lastError}</div>}</>
          : <span class="muted">default</span>}
      </td>
      <td>
        <div class="row">
          <select aria-label={`Configuration for ${h.name}`} value={pick} onChange={(e) => setPick(e.currentTarget.value)}>
            {p.configs.map((c) => <option value={c.id} key={c.id}>{c.name}</option>)}
          </select>
          <button type="button" disabled={act.busy || !pick} onClick={() => apply(pick)}>Apply</button>
          <button type="button" class="secondary" disabled={act.busy || !b} onClick={() => apply(null)}>Revert to default</button>
        </div>
        {act.busy && <Progress>Sending to the host…</Progress>}
        <ErrorBox error={act.error} />
      </td>
    </tr>
  );
}

export function HostBindings(p: { configs: ModelConfig[]; onChanged: () => void }) {
  const [tick, bump] = useTick();
  useEvery(POLL_MS, bump);
  const hosts = useLoad(() => client().hosts.list(), [tick]);
  const changed = () => {
    bump();
    p.onChanged();
  };
  return (
    <section class="panel" aria-labelledby="hosts-h">
      <h2 id="hosts-h">Hosts</h2>
      <p class="muted">Sync state refreshes every {POLL_MS / 1000} s: <code>syncing</code> → <code>idle</code> (in effect); <code>pending</code> waits for the host's running task; <code>failed</code> is retried.</p>
      <ErrorBox error={hosts.error} />
      {!hosts.data && hosts.loading && <Loading />}
      {hosts.data && (hosts.data.items.length === 0 ? <Empty>No hosts yet: pair one with the agent-host CLI.</Empty> : p.configs.length === 0 && <Empty>Create a configuration above to apply it to a host.</Empty>)}
      {hosts.data && hosts.data.items.length > 0 && (
        <table class="grid">
          <thead><tr><th>Host</th><th>Model configuration</th><th>Change</th></tr></thead>
          <tbody>{hosts.data.items.map((h) => <HostRow key={h.id} host={h} configs={p.configs} onChanged={changed} />)}</tbody>
        </table>
      )}
    </section>
  );
}
