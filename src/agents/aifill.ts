// `POST /agents/ai-fill`: drafts displayName, name, desc, tags and cat from
// a short text — through one of the caller's model configurations when one
// answers (aifill-model.ts; `source: "model"`), else by deterministic keyword
// rules (`source: "rules"`). It never writes the agent.
import { slug } from './rules.js';
import type { ModelDrafter } from './aifill-model.js';

/** The answer: every field present; the model's valid fields over the rules' draft. */
export async function fillDraft(userId: string, body: { text: string; configId?: string }, model?: ModelDrafter) {
  const rules = aiFill(body.text);
  const s = model ? await model(userId, body.text, body.configId) : null;
  if (!s) return { ...rules, source: 'rules' as const };
  if (!s.fields) return { ...rules, source: 'rules' as const, reason: s.reason };
  return { ...rules, ...s.fields, source: 'model' as const, configId: s.configId };
}

const CATEGORY_WORDS: Array<[string, RegExp]> = [
  ['coding', /\b(code|coding|bug|debug|refactor|test|tests|typescript|javascript|python|rust|golang|java|api|compile|review|git|programm\w*)\b/i],
  ['data', /\b(data|sql|database|csv|chart|analytics?|analysis|spreadsheet|excel|etl|statistics?)\b/i],
  ['ops', /\b(deploy\w*|server|docker|kubernetes|k8s|ci|cd|devops|infra\w*|monitor\w*|logs?|linux|shell)\b/i],
  ['writing', /\b(write|writing|blog|article|essay|copy|translate|translation|proofread\w*|summar\w*|email)\b/i],
  ['research', /\b(research|paper|papers|literature|survey|study|citations?)\b/i],
  ['design', /\b(design|ui|ux|figma|css|layout|logo)\b/i],
  ['education', /\b(teach\w*|tutor\w*|learn\w*|lesson|course|explain)\b/i],
];

const STOP = new Set(
  'a an and are as at be by can for from has have help helps i in into is it its me my of on or our that the this to we with you your will which who what when how agent assistant'.split(' '),
);

export function aiFill(text: string) {
  const clean = text.replace(/\s+/g, ' ').trim();
  const first = clean.split(/(?<=[.!?。！？])\s*/)[0] || clean;
  const words = first.split(' ').slice(0, 6).join(' ');
  const displayName = truncate(words.charAt(0).toUpperCase() + words.slice(1), 80).replace(/[.!?。！？,;:]+$/, '') || 'New agent';
  const counts = new Map<string, number>();
  for (const w of clean.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}+#.-]*/gu) ?? []) {
    const t = w.replace(/[.-]+$/, '');
    if (t.length < 3 || t.length > 30 || STOP.has(t) || /^\d+$/.test(t)) continue;
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  const tags = [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 5).map(([t]) => t);
  const cat = CATEGORY_WORDS.find(([, re]) => re.test(clean))?.[0] ?? 'other';
  return { name: slug(displayName, 80) || 'new-agent', displayName, desc: truncate(clean, 1000), tags, cat };
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max).trimEnd();
}
