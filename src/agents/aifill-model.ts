// The model-backed half of `POST /agents/ai-fill`: the prompt that asks a
// model for the agent fields as JSON, and the check of its answer against the
// agent field limits (what does not fit is trimmed or dropped). Pure: the call
// itself is the model-configs domain's (model-configs/suggest.ts).
import { slug } from './rules.js';

export interface Draft {
  name: string;
  displayName: string;
  desc: string;
  tags: string[];
  cat: string;
}

/** What a model gave: the fields that fit (and the configuration used), or why nothing came. */
export type Suggestion = { fields: Partial<Draft>; configId: string } | { fields: null; reason: string };
/** Asks the caller's model configuration(s); null when the caller has none. */
export type ModelDrafter = (userId: string, text: string, configId?: string) => Promise<Suggestion | null>;

export const SUGGEST_MAX_TOKENS = 800;
const TAGS_MAX = 5; // as the rules give (docs/decisions.md)

export function suggestPrompt(text: string): string {
  return [
    'You help an owner list a coding agent in a marketplace. From the description below, suggest the listing fields.',
    'Answer with one JSON object and nothing else, with exactly these keys:',
    '"displayName" (a short title, at most 80 characters), "name" (lowercase letters, digits and hyphens, at most 80),',
    `"desc" (at most 1000 characters), "tags" (at most ${TAGS_MAX} short lowercase keywords, each at most 30 characters),`,
    '"cat" (one of: coding, data, ops, writing, research, design, education, other).',
    '',
    'Description:',
    '"""',
    text,
    '"""',
  ].join('\n');
}

/** The fields of a model's reply that fit the agent limits; null when the reply holds no JSON object. */
export function parseSuggestion(reply: string): Partial<Draft> | null {
  const obj = firstJsonObject(reply);
  if (!obj) return null;
  const out: Partial<Draft> = {};
  const displayName = line(obj.displayName, 80);
  if (displayName) out.displayName = displayName;
  const name = typeof obj.name === 'string' ? slug(obj.name, 80) : '';
  if (name) out.name = name;
  else if (displayName) out.name = slug(displayName, 80) || undefined;
  if (!out.name) delete out.name;
  if (typeof obj.desc === 'string' && obj.desc.trim()) out.desc = cut(obj.desc.trim(), 1000);
  if (Array.isArray(obj.tags)) {
    const tags: string[] = [];
    for (const t of obj.tags) {
      const v = line(t, 30).toLowerCase();
      if (v && !tags.includes(v)) tags.push(v);
      if (tags.length === TAGS_MAX) break;
    }
    if (tags.length) out.tags = tags;
  }
  const cat = line(obj.cat, 50).toLowerCase();
  if (cat) out.cat = cat;
  return Object.keys(out).length ? out : null;
}

/**
 * The first parseable `{…}` in the reply (models wrap JSON in prose or code
 * fences). Bounded work whatever the reply: its first 20,000 characters, at
 * most 5 starts × 20 ends tried.
 */
function firstJsonObject(reply: string): Record<string, unknown> | null {
  const s = reply.slice(0, 20_000);
  let start = s.indexOf('{');
  for (let starts = 0; start !== -1 && starts < 5; starts++, start = s.indexOf('{', start + 1)) {
    let end = s.lastIndexOf('}');
    for (let ends = 0; end > start && ends < 20; ends++, end = s.lastIndexOf('}', end - 1)) {
      try {
        const v = JSON.parse(s.slice(start, end + 1));
        if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      } catch {
        // try a shorter span
      }
    }
  }
  return null;
}

/** One line of text, whitespace collapsed, at most `max` characters; '' when not a non-empty string. */
function line(v: unknown, max: number): string {
  return typeof v === 'string' ? cut(v.replace(/\s+/g, ' ').trim(), max) : '';
}

/** At most `max` UTF-16 units, never ending on half of a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let r = s.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(r)) r = r.slice(0, -1);
  return r.trimEnd();
}
