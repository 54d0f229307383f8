// settings.json is the owner's file, and every key but the six the hub manages must come back as it
// was. JSON.parse reads every number as a double, so 12345678901234567890 or 0.30000000000000000001
// (or 1E5, or -0) would be written back changed. Each number literal a double does not give back as
// written is carried through the parse as a marker string, and put back as written when the file is.
import { randomBytes } from 'node:crypto';

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export interface ParsedKeepingNumbers {
  json: unknown;
  /** `text` (JSON made from `json`) with each carried number back as it was written. */
  restore(text: string): string;
}

/** JSON.parse of `text`, except number literals a double would change, which come back whole through `restore`. */
export function parseKeepingNumbers(text: string): ParsedKeepingNumbers {
  // A NUL and a random tag: no string of the owner's file can be taken for a marker.
  const tag = `\u0000n${randomBytes(6).toString('hex')}:`;
  const kept: string[] = [];
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; ) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      for (i++; i < text.length && text[i] !== '"'; ) i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (ch !== 0x2d /* - */ && (ch < 0x30 || ch > 0x39)) {
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    const lit = NUMBER.exec(text)?.[0];
    if (!lit) {
      i++; // not JSON: JSON.parse below says where
      continue;
    }
    if (String(Number(lit)) !== lit) {
      out += text.slice(last, i) + JSON.stringify(tag + kept.length);
      kept.push(lit);
      last = i + lit.length;
    }
    i += lit.length;
  }
  const json: unknown = JSON.parse(out + text.slice(last));
  if (!kept.length) return { json, restore: (s) => s };
  const marker = new RegExp(`"${JSON.stringify(tag).slice(1, -1).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}(\\d+)"`, 'g');
  return { json, restore: (s) => s.replace(marker, (_, n: string) => kept[Number(n)]) };
}
