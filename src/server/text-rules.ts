// Text every field of the API refuses, checked once for every body and query
// before any handler or query runs (400 4000 naming the field):
// - U+0000: PostgreSQL refuses the byte in text (the hub answered 500 when a
//   client sent one, found by bench/fuzz.ts);
// - a lone surrogate (`"\ud800"` in JSON, half of a UTF-16 pair): not Unicode
//   text at all. A message's content reached PostgreSQL as JSON, which refuses
//   it (500); text parameters were silently stored as U+FFFD.
import { fail } from '../errors.js';

/** Why a string breaks a rule, else undefined. */
function badText(s: string): string | undefined {
  if (s.includes('\u0000')) return 'the NUL character (U+0000) is not allowed';
  // isWellFormed: ES2024, in Node 20's V8; false exactly when a surrogate is not half of a pair.
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'a lone surrogate (half of a UTF-16 pair) is not Unicode text';
  return undefined;
}

/** Escapes a key for the path in an error message (NUL and lone surrogates shown as \u escapes). */
const shown = (k: string) => k.replace(/\u0000|[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The JSON-pointer-ish path of the first string (value or key) breaking a rule, and why; else undefined. Iterative: bodies may nest deeply. */
export function findBadText(input: unknown): { at: string; why: string } | undefined {
  const stack: Array<[unknown, string]> = [[input, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      const why = badText(v);
      if (why) return { at: at || '/', why };
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        const p = `${at}/${shown(k)}`;
        const why = badText(k);
        if (why) return { at: p, why };
        stack.push([(v as Record<string, unknown>)[k], p]);
      }
    }
  }
  return undefined;
}

/** Throws 400 4000 when `input` holds text a field cannot: `where` is 'body' or 'query'. */
export function refuseBadText(input: unknown, where: string): void {
  const bad = findBadText(input);
  if (bad) throw fail('VALIDATION', `${where}${bad.at}: ${bad.why}`);
}
