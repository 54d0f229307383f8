// Create or edit a model configuration. The key is write-only: editing shows its hint and
// keeps the stored key unless a new one is typed. "Test" runs the connectivity test on the form's values.
import { useState } from 'preact/hooks';
import type { ModelConfig, ModelTest, NewModelConfig } from '../../src/client/index.js';
import { client } from '../session.js';
import { ErrorBox, Progress } from '../ui.js';
import { useAction } from '../use-action.js';
import { TestResult } from './test-result.js';

type ApiType = NewModelConfig['apiType'];
type AuthMode = NonNullable<NewModelConfig['authMode']>;

export function ConfigForm(p: { config?: ModelConfig; onSaved: (c: ModelConfig) => void; onCancel?: () => void }) {
  const c = p.config;
  const [name, setName] = useState(c?.name ?? '');
  const [apiType, setApiType] = useState<ApiType>(c?.apiType ?? 'anthropic');
  const [baseUrl, setBaseUrl] = useState(c?.baseUrl ?? '');
  const [apiKey, setApiKey] = useState('');
  const [authMode, setAuthMode] = useState<AuthMode | ''>(c?.authMode ?? '');
  const [modelName, setModelName] = useState(c?.modelName ?? '');
  const save = useAction();
  const test = useAction();
  const [result, setResult] = useState<ModelTest>();

  const submit = async (e: Event) => {
    e.preventDefault();
    const fields = { name: name.trim(), apiType, baseUrl: baseUrl.trim(), modelName: modelName.trim(), ...(authMode ? { authMode } : {}) };
    const saved = await save.run(() =>
      c ? client().modelConfigs.update(c.id, { ...fields, ...(apiKey ? { apiKey } : {}) }) : client().modelConfigs.create({ ...fields, apiKey }),
    );
    if (saved) {
      setApiKey('');
      p.onSaved(saved);
    }
  };
  const runTest = async () => {
    setResult(undefined);
    const draft = { apiType, baseUrl: baseUrl.trim() || undefined, modelName: modelName.trim() || undefined, apiKey: apiKey || undefined };
    const r = await test.run(() => client().modelConfigs.test(c ? { id: c.id, ...draft } : draft));
    if (r) setResult(r);
  };
  return (
    <form class="stack panel" onSubmit={submit} aria-label={c ? `Edit ${c.name}` : 'New model configuration'}>
      <h2>{c ? `Edit “${c.name}”` : 'New model configuration'}</h2>
      <label>Name <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      <label>Request format{' '}
        <select value={apiType} onChange={(e) => setApiType(e.currentTarget.value as ApiType)}>
          <option value="anthropic">anthropic (messages)</option>
          <option value="openai">openai (chat completions)</option>
        </select>
      </label>
      <label>Base URL <input required type="url" maxLength={2000} placeholder="https://api.example.com" value={baseUrl} onInput={(e) => setBaseUrl(e.currentTarget.value)} /></label>
      <label>API key{' '}
        <input type="password" autocomplete="new-password" required={!c} maxLength={4000} value={apiKey}
          placeholder={c ? `stored key ${c.apiKeyHint} — leave empty to keep it` : ''} onInput={(e) => setApiKey(e.currentTarget.value)} />
      </label>
      <label>Auth mode{' '}
        <select value={authMode} onChange={(e) => setAuthMode(e.currentTarget.value as AuthMode | '')}>
          {!c && <option value="">detect (bearer first)</option>}
          <option value="bearer">bearer</option>
          <option value="x-api-key">x-api-key</option>
        </select>
      </label>
      <label>Model name <input required maxLength={200} pattern="[^\s]+" value={modelName} onInput={(e) => setModelName(e.currentTarget.value)} /></label>
      <div class="row">
        <button type="submit" disabled={save.busy}>{save.busy ? 'Saving…' : c ? 'Save' : 'Create'}</button>
        <button type="button" class="secondary" disabled={test.busy} onClick={runTest}>Test connection</button>
        {p.onCancel && <button type="button" class="secondary" onClick={p.onCancel}>Cancel</button>}
      </div>
      {test.busy && <Progress>Testing: a real message is sent to the endpoint (up to 2 minutes)…</Progress>}
      {result && <TestResult result={result} />}
      <ErrorBox error={save.error ?? test.error} />
    </form>
  );
}
