// PostgreSQL refuses U+0000 in text (the hub answered 500 when a client sent
// one, found by bench/fuzz.ts). No field of the API can hold it, so one check
// here refuses it in every body and query before any handler or query runs.
import { fail } from '../errors.js';

/** The JSON-pointer-ish path of the first string (value or key) holding NUL, else undefined. Iterative: bodies may nest deeply. */
export function findNul(input: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[input, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return at || '/';
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        const p = `${at}/${k.replace(/\u0000/g, '\\u0000')}`;
        if (k.includes('\u0000')) return p;
        stack.push([(v as Record<string, unknown>)[k], p]);
      }
    }
  }
  return undefined;
}

/** Throws 400 4000 when `input` holds a NUL anywhere; `where` is 'body' or 'query'. */
export function refuseNul(input: unknown, where: string): void {
  const at = findNul(input);
  if (at !== undefined) throw fail('VALIDATION', `${where}${at}: the NUL character (U+0000) is not allowed`);
}
