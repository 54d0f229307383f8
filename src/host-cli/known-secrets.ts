// What an engine's failure text may echo and must not carry off this machine: the keys the engine was
// given. A failed run's text reaches whoever used the agent (a stranger, for a public one) and the hub's
// logs; the hub scrubs what looks like a key, but keys of other shapes (base64 with `/` and `+`) pass its
// patterns. Here the exact values are known: the engine's environment and Claude Code's settings and login.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS_FILE } from './settings.js';

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;
/** Shorter values are not taken for keys: replacing them would garble ordinary words. */
const MIN_CHARS = 8;

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Secret-named string values of an object and of the objects in it, two levels down. */
function secretValues(o: unknown, out: Set<string>, depth = 0): void {
  if (!o || typeof o !== 'object' || depth > 2) return;
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    if (typeof v === 'string' && SECRET_NAME.test(k) && v.length >= MIN_CHARS) out.add(v);
    else if (v && typeof v === 'object') secretValues(v, out, depth + 1);
  }
}

/** The key values an engine started with `env` under `claudeConfigDir` may know, longest first. */
export function knownSecrets(env: NodeJS.ProcessEnv, claudeConfigDir: string): string[] {
  const out = new Set<string>();
  secretValues(env, out);
  secretValues((readJson(join(claudeConfigDir, SETTINGS_FILE)) as { env?: unknown } | undefined)?.env, out);
  secretValues(readJson(join(claudeConfigDir, '.credentials.json')), out);
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with every known secret replaced. */
export function redactKnown(text: string, secrets: string[]): string {
  for (const s of secrets) if (text.includes(s)) text = text.split(s).join('[redacted]');
  return text;
}
