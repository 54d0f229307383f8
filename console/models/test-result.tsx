// The connectivity test's answer: ok with latency and the reply, or its `reason` and the endpoint's error.
import type { ModelTest } from '../../src/client/index.js';

const REASONS: Record<string, string> = {
  auth: 'the endpoint refused the key',
  model_not_found: 'the endpoint does not know this model',
  quota: 'the account behind the key is out of quota or rate limited',
  timeout: 'no answer in time',
  network: 'the endpoint could not be reached',
  bad_response: 'the endpoint answered something that is not a model reply',
  path: 'the base URL does not lead to the API (check the path)',
};

export function TestResult(p: { result: ModelTest }) {
  const r = p.result;
  if (r.ok) {
    return (
      <div class="panel" role="status">
        <p><span class="state ok">passed</span> in {Math.round(r.latencyMs)} ms{r.authMode ? ` · auth mode ${r.authMode}` : ''}</p>
        {r.replyPreview && <p class="muted">Reply: “{r.replyPreview}”</p>}
      </div>
    );
  }
  return (
    <div class="panel" role="alert">
      <p><span class="state failed">failed</span>{r.reason ? <> · reason <code>{r.reason}</code>: {REASONS[r.reason] ?? r.reason}</> : null} · {Math.round(r.latencyMs)} ms</p>
      {r.error && <p class="error">{r.error}</p>}
    </div>
  );
}
