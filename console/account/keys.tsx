// API keys: a new or refreshed key is shown once, here, and never again (only its preview).
import { useState } from 'preact/hooks';
import type { CreatedApiKey } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';

export function ApiKeys() {
  const [tick, reload] = useTick();
  const keys = useLoad(() => client().keys.list(), [tick]);
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<CreatedApiKey>();
  const act = useAction();
  const shown = async (p: Promise<CreatedApiKey>) => {
    const k = await act.run(() => p);
    if (k) setFresh(k);
    reload();
  };
  const create = (e: Event) => {
    e.preventDefault();
    void shown(client().keys.create(name.trim())).then(() => setName(''));
  };
  const refresh = (id: string, n: string) => {
    if (confirm(`Refresh “${n}”? The old key stops working at once.`)) void shown(client().keys.refresh(id));
  };
  const remove = async (id: string, n: string) => {
    if (confirm(`Delete “${n}”?`) && (await act.run(() => client().keys.remove(id)))) reload();
  };
  return (
    <section class="panel" aria-labelledby="keys-h">
      <h2 id="keys-h">API keys</h2>
      <form class="filters" onSubmit={create}>
        <label>Name <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <button type="submit" disabled={act.busy || !name.trim()}>Create key</button>
      </form>
      {fresh && (
        <div class="panel" role="status">
          <p>Your new key <strong>{fresh.name}</strong>: copy it now, it is not shown again.</p>
          <p class="secret" data-new-key>{fresh.key}</p>
          <button type="button" class="secondary" onClick={() => setFresh(undefined)}>Done</button>
        </div>
      )}
      <ErrorBox error={keys.error ?? act.error} />
      {!keys.data && keys.loading && <Loading />}
      {keys.data && (keys.data.items.length === 0 ? <Empty>No API keys.</Empty> : (
        <table class="grid" aria-label="API keys">
          <thead><tr><th>Name</th><th>Key</th><th>Last used</th><th>Created</th><th>Actions</th></tr></thead>
          <tbody>
            {keys.data.items.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td><td><code>{k.preview}</code></td><td>{when(k.lastUsedAt)}</td><td>{when(k.createdAt)}</td>
                <td><div class="row">
                  <button type="button" class="secondary" disabled={act.busy} onClick={() => refresh(k.id, k.name)}>Refresh</button>
                  <button type="button" class="danger" disabled={act.busy} onClick={() => remove(k.id, k.name)}>Delete</button>
                </div></td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
