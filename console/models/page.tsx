// Model configurations: the list (key hint only), create and edit, test, delete; and the hosts they apply to.
import { useState } from 'preact/hooks';
import type { ModelConfig, ModelTest } from '../../src/client/index.js';
import { client } from '../session.js';
import { Empty, ErrorBox, Loading, Progress, when } from '../ui.js';
import { useAction } from '../use-action.js';
import { useLoad } from '../use-load.js';
import { useTick } from '../use-poll.js';
import { ConfigForm } from './form.js';
import { HostBindings } from './hosts.js';
import { TestResult } from './test-result.js';

function ConfigRow(p: { c: ModelConfig; onEdit: () => void; onChanged: () => void }) {
  const c = p.c;
  const act = useAction();
  const [result, setResult] = useState<ModelTest>();
  const test = async () => {
    setResult(undefined);
    const r = await act.run(() => client().modelConfigs.test({ id: c.id }));
    if (r) setResult(r);
  };
  const remove = async () => {
    if (confirm(`Delete the configuration “${c.name}”?`) && (await act.run(() => client().modelConfigs.remove(c.id)))) p.onChanged();
  };
  return (
    <tr data-config={c.id}>
      <td><strong>{c.name}</strong><div class="muted">{c.apiType} · {c.modelName}</div></td>
      <td class="clip">{c.baseUrl}</td>
      <td><code>{c.apiKeyHint}</code><div class="muted">{c.authMode}</div></td>
      <td class="num">{c.hostCount}</td>
      <td class="muted">{when(c.updatedAt)}</td>
      <td>
        <div class="row">
          <button type="button" class="secondary" onClick={p.onEdit}>Edit</button>
          <button type="button" class="secondary" disabled={act.busy} onClick={test}>Test</button>
          <button type="button" class="danger" disabled={act.busy} onClick={remove}>Delete</button>
        </div>
        {act.busy && <Progress>Testing…</Progress>}
        {result && <TestResult result={result} />}
        <ErrorBox error={act.error} />
      </td>
    </tr>
  );
}

export function ModelConfigs() {
  const [tick, reload] = useTick();
  const list = useLoad(() => client().modelConfigs.list(), [tick]);
  const [editing, setEditing] = useState<ModelConfig | 'new'>();
  const saved = () => {
    setEditing(undefined);
    reload();
  };
  const items = list.data?.items ?? [];
  return (
    <section>
      <h1>Model configurations</h1>
      <p class="muted">Custom model endpoints for your hosts. A key is stored encrypted and never shown again: only its hint.</p>
      <ErrorBox error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && (items.length === 0
        ? <Empty>No model configurations yet.</Empty>
        : (
          <table class="grid">
            <thead><tr><th>Name</th><th>Base URL</th><th>Key</th><th class="num">Hosts</th><th>Updated</th><th>Actions</th></tr></thead>
            {/* Keyed by the version too: a test's result or a refusal shown in a row is about the values it was for, not an edit's. */}
            <tbody>{items.map((c) => <ConfigRow key={`${c.id} ${c.updatedAt}`} c={c} onEdit={() => setEditing(c)} onChanged={reload} />)}</tbody>
          </table>
        ))}
      {editing === undefined
        ? <p><button type="button" onClick={() => setEditing('new')}>New configuration</button></p>
        : <ConfigForm key={editing === 'new' ? 'new' : editing.id} config={editing === 'new' ? undefined : editing} onSaved={saved} onCancel={() => setEditing(undefined)} />}
      <HostBindings configs={items} onChanged={reload} />
    </section>
  );
}
