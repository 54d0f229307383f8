// The connectivity test (run by the hub, or by a host CLI for its owner): a real short message to the endpoint, judged by the
// reply's content, not by reachability. Failures carry a stable `reason`.
import { postJson, WireError, type WireReply } from './wire.js';
import type { EgressPolicy } from './egress.js';

export type ApiType = 'anthropic' | 'openai';
export type AuthMode = 'bearer' | 'x-api-key';

export type FailReason = 'auth' | 'model_not_found' | 'quota' | 'timeout' | 'network' | 'bad_response' | 'path';

export interface ProbeTarget {
  apiType: ApiType;
  baseUrl: string;
  apiKey: string;
  modelName: string;
}

export interface ProbeResult {
  ok: boolean;
  authMode?: AuthMode;
  replyPreview?: string;
  latencyMs: number;
  error?: string;
  reason?: FailReason;
}

const PROMPT = 'Reply with the single word: pong';
const PREVIEW_MAX = 120;
const ERROR_MAX = 500;

export async function probe(t: ProbeTarget, opts: { timeoutMs: number; egress: EgressPolicy }): Promise<ProbeResult> {
  const { text: _text, ...result } = await ask(t, PROMPT, 64, opts);
  return result;
}

/**
 * One short exchange with the endpoint (the probe's, with any prompt): the same
 * egress rule, deadline, auth-mode fallback and failure reasons; `text` is the
 * whole reply text (bounded by the wire's body cap) when `ok`.
 */
export async function ask(
  t: ProbeTarget,
  prompt: string,
  maxTokens: number,
  opts: { timeoutMs: number; egress: EgressPolicy },
): Promise<ProbeResult & { text?: string }> {
  const started = Date.now();
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const base = t.baseUrl.replace(/\/+$/, '');
  const scrub = (s: string) => (t.apiKey ? s.split(t.apiKey).join('***') : s).slice(0, ERROR_MAX);
  try {
    if (t.apiType === 'openai') {
      const url = new URL(base + '/chat/completions');
      const body = JSON.stringify({ model: t.modelName, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] });
      const r = await postJson(url, { authorization: `Bearer ${t.apiKey}` }, body, { signal, egress: opts.egress });
      return judge(r, completionText, started, scrub);
    }
    const url = new URL(base + '/v1/messages');
    const body = JSON.stringify({ model: t.modelName, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] });
    const common = { 'anthropic-version': '2023-06-01' };
    let authMode: AuthMode = 'bearer';
    let attemptStart = Date.now();
    let r = await postJson(url, { ...common, authorization: `Bearer ${t.apiKey}` }, body, { signal, egress: opts.egress });
    if (r.status === 401 || r.status === 403) {
      authMode = 'x-api-key';
      attemptStart = Date.now();
      r = await postJson(url, { ...common, 'x-api-key': t.apiKey }, body, { signal, egress: opts.egress });
    }
    const res = judge(r, messagesText, attemptStart, scrub);
    return res.ok ? { ...res, authMode } : { ...res, latencyMs: Date.now() - started };
  } catch (e) {
    const latencyMs = Date.now() - started;
    if (e instanceof WireError) {
      const error = e.kind === 'timeout' ? `no reply within ${Math.round(opts.timeoutMs / 1000)} s` : scrub(e.message);
      return { ok: false, latencyMs, error, reason: e.kind };
    }
    return { ok: false, latencyMs, error: 'network error', reason: 'network' };
  }
}

function judge(r: WireReply, textOf: (j: any) => string | undefined, started: number, scrub: (s: string) => string): ProbeResult & { text?: string } {
  const latencyMs = Date.now() - started;
  let json: any;
  try {
    json = JSON.parse(r.body);
  } catch {
    json = undefined;
  }
  if (r.status < 200 || r.status >= 300) {
    const msg = messageOf(json, r.body);
    return { ok: false, latencyMs, error: scrub(`HTTP ${r.status}: ${msg}`), reason: classify(r.status, msg, json) };
  }
  if (json === undefined || typeof json !== 'object' || json === null) {
    return { ok: false, latencyMs, error: scrub(`HTTP ${r.status}: reply is not JSON: ${snippet(r.body)}`), reason: looksLikeHtml(r.body) ? 'path' : 'bad_response' };
  }
  if (json.error) {
    const msg = messageOf(json, r.body);
    return { ok: false, latencyMs, error: scrub(`HTTP ${r.status}: ${msg}`), reason: classify(r.status, msg, json) };
  }
  const text = textOf(json)?.trim();
  if (!text) return { ok: false, latencyMs, error: `HTTP ${r.status}: reply has no text content`, reason: 'bad_response' };
  return { ok: true, latencyMs, replyPreview: preview(text), text };
}

/** Messages format: the text blocks of `content`. */
function messagesText(j: any): string | undefined {
  if (!Array.isArray(j.content)) return undefined;
  return j.content
    .filter((b: any) => b && typeof b.text === 'string')
    .map((b: any) => b.text)
    .join('');
}

/** Chat-completions format: the first choice's message (reasoning text counts when content is empty). */
function completionText(j: any): string | undefined {
  const m = Array.isArray(j.choices) ? j.choices[0]?.message : undefined;
  if (!m) return undefined;
  if (typeof m.content === 'string' && m.content.trim()) return m.content;
  if (Array.isArray(m.content)) return m.content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return typeof m.reasoning_content === 'string' ? m.reasoning_content : undefined;
}

/** The endpoint's own readable message, whatever shape its error takes. */
function messageOf(json: any, raw: string): string {
  const e = json?.error;
  if (typeof e === 'string') return e;
  if (e && typeof e.message === 'string') return e.message;
  if (typeof json?.message === 'string') return json.message;
  if (typeof json?.detail === 'string') return json.detail;
  return raw.trim() ? snippet(raw) : '(empty body)';
}

function classify(status: number, msg: string, json: any): FailReason {
  const kind = `${json?.error?.type ?? ''} ${json?.error?.code ?? ''} ${json?.type ?? ''}`;
  const text = `${kind} ${msg}`;
  if (status === 401 || status === 403 || /authentication|invalid.?api.?key|unauthori[sz]ed/i.test(kind)) return 'auth';
  if (status === 429 || status === 402 || /quota|insufficient.?(balance|credit|funds)|billing|rate.?limit/i.test(text)) return 'quota';
  if (/model/i.test(text) && (status === 404 || /not.?found|does not exist|not exist|unknown|no such|invalid|not supported|unavailable|not available/i.test(text))) return 'model_not_found';
  if (status === 404 || status === 405) return 'path';
  return 'bad_response';
}

function preview(text: string): string {
  let s = text.replace(/\s+/g, ' ').slice(0, PREVIEW_MAX);
  // Never end on half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(s)) s = s.slice(0, -1);
  return s;
}

const snippet = (raw: string) => raw.replace(/\s+/g, ' ').trim().slice(0, 200);
const looksLikeHtml = (raw: string) => /^\s*<(!doctype|html)/i.test(raw);
