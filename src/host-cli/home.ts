// Where the CLI keeps its pairing: $AGENT_HOST_HOME (default ~/.agent-host),
// one JSON file readable by its owner only.
import { mkdirSync, readFileSync, writeFileSync, renameSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Pairing {
  hub: string;
  hostId: string;
  credential: string;
  name: string;
  /** sha256 of the pair key this pairing was made with (pair.ts: a restart with the same, spent key goes on). */
  pairKeySha256?: string;
}

export function homeDir(env = process.env): string {
  return env.AGENT_HOST_HOME || join(homedir(), '.agent-host');
}

export const credentialPath = (env = process.env) => join(homeDir(env), 'credential.json');

export function savePairing(p: Pairing, env = process.env): string {
  const dir = homeDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = credentialPath(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(p, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

export function loadPairing(env = process.env): Pairing | undefined {
  let text: string;
  try {
    text = readFileSync(credentialPath(env), 'utf8');
  } catch {
    return undefined;
  }
  // A damaged file is named, so its owner knows what to delete or restore (then pair again).
  const bad = (why: string) => new Error(`${credentialPath(env)} is not a pairing file (${why}); remove it and pair again`);
  let p: Pairing;
  try {
    p = JSON.parse(text) as Pairing;
  } catch {
    throw bad('not valid JSON');
  }
  if (!p || typeof p !== 'object' || typeof p.hub !== 'string' || typeof p.credential !== 'string' || typeof p.hostId !== 'string') throw bad('fields missing');
  return p;
}
