// API keys: a new or refreshed key is shown once, here, and never again (only its preview). The key this
// console is signed in with is marked: refreshing it moves the console to the new key, deleting it signs out.
import { useState } from 'preact/hooks';
import type { ApiKey, CreatedApiKey } from '../../src/client/index.js';
import { client, setToken } from '../session.js';
import { Empty, ErrorBox, Loading, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';

export function ApiKeys(p: { onSignedOut: () => void }) {
  const [tick, reload] = useTick();
  const keys = useLoad(() => client().keys.list(), [tick]);
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<CreatedApiKey>();
  const act = useAction();
  // Refused or not, the list is read again: what the hub refused may be a key gone elsewhere.
  const shown = async (call: () => Promise<CreatedApiKey>, own = false) => {
    const k = await act.run(call);
    if (k) {
      if (own) setToken(k.key); // before the list is read again: the old key is refused already
      setFresh(k);
    }
    reload();
    return k;
  };
  const create = async (e: Event) => {
    e.preventDefault();
    // The name stays when the hub refused it, to be mended rather than typed again.
    if (await shown(() => client().keys.create(name.trim()))) setName('');
  };
  const refresh = (k: ApiKey) => {
    const own = k.current ? ' This console is signed in with it and goes on with the new one.' : '';
    if (confirm(`Refresh “${k.name}”? The old key stops working at once.${own}`)) void shown(() => client().keys.refresh(k.id), k.current);
  };
  const remove = async (k: ApiKey) => {
    const own = k.current ? ' This console is signed in with it: you will be signed out.' : '';
    if (!confirm(`Delete “${k.name}”?${own}`)) return;
    const done = await act.run(() => client().keys.remove(k.id));
    if (done && k.current) return p.onSignedOut();
    reload();
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
                <td>{k.name}{k.current && <> <span class="badge">this console</span></>}</td>
                <td><code>{k.preview}</code></td><td>{when(k.lastUsedAt)}</td><td>{when(k.createdAt)}</td>
                <td><div class="row">
                  <button type="button" class="secondary" disabled={act.busy} onClick={() => refresh(k)}>Refresh</button>
                  <button type="button" class="danger" disabled={act.busy} onClick={() => remove(k)}>Delete</button>
                </div></td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
