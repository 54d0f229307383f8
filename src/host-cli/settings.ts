// Applies model settings to an engine's settings file on the host. OWNED BY the model-configs work (issue 5).
// Contract used by the CLI's connection (hosts work, issue 3).
//
// For Claude Code: exactly six keys of `env` in $CLAUDE_CONFIG_DIR/settings.json
// (ARCHITECTURE.md §4); every other key stays as it was. Before the first
// switch from the default, the six values (and where they sat) are saved to a
// backup beside the file; later switches keep that backup; revert writes it
// back exactly (a key absent before is absent after) and deletes it. Every
// write is atomic (temp file + rename) with mode 0600, as the file now holds a key.
// A symlinked settings.json (dotfiles) stays a link: writes go to its final
// target (temp file in the target's directory, renamed over it), and revert
// restores the target's bytes and mode; the link itself is never replaced.
import { chmod, lstat, open, readFile, readlink, rename, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { FrameOf, HubToHost } from '../../host-protocol/frames.js';
import { parseKeepingNumbers } from './json-numbers.js';

export type SettingsConfig = FrameOf<HubToHost, 'settings.apply'>['config'];

export interface SettingsOptions {
  /** $CLAUDE_CONFIG_DIR, default ~/.claude */
  claudeConfigDir: string;
}

/** Claude Code's settings directory: $CLAUDE_CONFIG_DIR, else ~/.claude (the one rule for every reader here). */
export const claudeConfigDirOf = (env = process.env): string => env.CLAUDE_CONFIG_DIR || join(homedir(), '.claude');

export const SETTINGS_FILE = 'settings.json';
/** Beside settings.json, so that it follows CLAUDE_CONFIG_DIR. */
export const BACKUP_FILE = 'agent-host-model-backup.json';

export const MANAGED_KEYS = [
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_DEFAULT_OPUS_MODEL',
  'ANTHROPIC_DEFAULT_SONNET_MODEL',
  'ANTHROPIC_DEFAULT_HAIKU_MODEL',
] as const;
type ManagedKey = (typeof MANAGED_KEYS)[number];

/** What default→custom saved: the six values that existed, and enough shape to put them back. */
interface Backup {
  v: 1;
  fileExisted: boolean;
  /** Permission bits of the file before the first switch (restored on revert). */
  fileMode: number | null;
  envExisted: boolean;
  values: Partial<Record<ManagedKey, unknown>>;
  /** Index of each saved key among the env keys, so the order comes back too. */
  positions: Partial<Record<ManagedKey, number>>;
}

type Json = Record<string, unknown>;

/** config = null reverts to the default. Resolves with a small summary for the reply's data; throws on failure. */
export async function applySettings(engine: string, config: SettingsConfig, opts: SettingsOptions): Promise<{ applied: boolean; reverted?: boolean }> {
  if (engine !== 'claude-code') throw new Error(`engine ${JSON.stringify(engine)} has no model settings on this host`);
  const file = join(opts.claudeConfigDir, SETTINGS_FILE);
  return serialized(file, () => (config ? apply(opts.claudeConfigDir, config) : revert(opts.claudeConfigDir)));
}

async function apply(dir: string, config: NonNullable<SettingsConfig>): Promise<{ applied: boolean }> {
  const file = join(dir, SETTINGS_FILE);
  const backupFile = join(dir, BACKUP_FILE);
  const current = await readSettings(file);
  const settings = current.json ?? {};
  const env = envOf(settings);

  if (!(await exists(backupFile))) {
    // default → custom: save what is there now, before touching anything.
    const keys = env ? Object.keys(env) : [];
    const backup: Backup = { v: 1, fileExisted: current.text !== null, fileMode: current.mode, envExisted: env !== undefined, values: {}, positions: {} };
    for (const k of MANAGED_KEYS) {
      if (env && Object.prototype.hasOwnProperty.call(env, k)) {
        backup.values[k] = env[k];
        backup.positions[k] = keys.indexOf(k);
      }
    }
    await writeAtomic(backupFile, JSON.stringify(backup, null, 2) + '\n', 0o600);
  }

  const next: Json = env ?? {};
  next.ANTHROPIC_BASE_URL = config.baseUrl;
  if (config.authMode === 'bearer') {
    next.ANTHROPIC_AUTH_TOKEN = config.apiKey;
    delete next.ANTHROPIC_API_KEY;
  } else {
    next.ANTHROPIC_API_KEY = config.apiKey;
    delete next.ANTHROPIC_AUTH_TOKEN;
  }
  next.ANTHROPIC_DEFAULT_OPUS_MODEL = config.model;
  next.ANTHROPIC_DEFAULT_SONNET_MODEL = config.model;
  next.ANTHROPIC_DEFAULT_HAIKU_MODEL = config.model;
  settings.env = next;
  await writeAtomic(await linkTarget(file), current.restore(format(settings, current.text)), 0o600);
  return { applied: true };
}

async function revert(dir: string): Promise<{ applied: boolean; reverted: true }> {
  const file = join(dir, SETTINGS_FILE);
  const backupFile = join(dir, BACKUP_FILE);
  const backup = await readBackup(backupFile);
  // No backup: the host is on its default already (or it was never switched by us).
  if (!backup) return { applied: false, reverted: true };

  const current = await readSettings(file);
  const settings = current.json ?? {};
  const env = envOf(settings) ?? {};
  // The other env keys in their current order, then the saved ones back at their old places.
  const entries = Object.entries(env).filter(([k]) => !(MANAGED_KEYS as readonly string[]).includes(k));
  const saved = MANAGED_KEYS.filter((k) => Object.prototype.hasOwnProperty.call(backup.values, k)).sort(
    (a, b) => (backup.positions[a] ?? Infinity) - (backup.positions[b] ?? Infinity),
  );
  for (const k of saved) entries.splice(Math.min(backup.positions[k] ?? entries.length, entries.length), 0, [k, backup.values[k]]);
  const restored = Object.fromEntries(entries);

  if (entries.length || backup.envExisted) settings.env = restored;
  else delete settings.env;

  const target = await linkTarget(file);
  if (!backup.fileExisted && Object.keys(settings).length === 0) {
    await unlink(target).catch(ignoreMissing);
  } else {
    await writeAtomic(target, current.restore(format(settings, current.text)), backup.fileMode ?? 0o600);
  }
  await unlink(backupFile).catch(ignoreMissing);
  return { applied: true, reverted: true };
}

// ---------- file helpers ----------

/** The file's text and object; `restore` puts the owner's numbers back as written into JSON made from it (json-numbers.ts). */
async function readSettings(file: string): Promise<{ text: string | null; json: Json | null; mode: number | null; restore(text: string): string }> {
  const same = (s: string) => s;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { text: null, json: null, mode: null, restore: same };
    throw e;
  }
  const mode = (await stat(file)).mode & 0o777;
  if (!text.trim()) return { text, json: {}, mode, restore: same };
  let json: unknown;
  let restore = same;
  try {
    ({ json, restore } = parseKeepingNumbers(text));
  } catch {
    // Never overwrite a file we cannot read back: the user's other settings live there.
    throw new Error(`${file} is not valid JSON; fix or remove it first`);
  }
  if (!isObject(json)) throw new Error(`${file} does not hold a JSON object`);
  return { text, json, mode, restore };
}

function envOf(settings: Json): Json | undefined {
  if (settings.env === undefined) return undefined;
  if (!isObject(settings.env)) throw new Error('settings.json: "env" is not an object');
  return settings.env;
}

async function readBackup(file: string): Promise<Backup | null> {
  try {
    const b = JSON.parse(await readFile(file, 'utf8')) as Backup;
    if (b?.v !== 1 || !isObject(b.values)) throw new Error('unknown backup format');
    b.positions ??= {};
    return b;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`model settings backup ${file} is unreadable: ${(e as Error).message}`);
  }
}

/** JSON in the file's own style: its indentation and its final newline (2 spaces + newline for a new file). */
function format(value: Json, original: string | null): string {
  if (original === null || !original.trim()) return JSON.stringify(value, null, 2) + '\n';
  const body = original.trim();
  const indent = body.includes('\n') ? (/\n([ \t]+)\S/.exec(body)?.[1] ?? 2) : undefined;
  const eol = /\r?\n$/.exec(original)?.[0] ?? '';
  let out = JSON.stringify(value, null, indent);
  if (eol === '\r\n') out = out.replace(/\n/g, '\r\n');
  return out + eol;
}

async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(text, 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await chmod(tmp, mode); // the umask may have narrowed or the caller widened it
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}

/** Where a write of `file` must land: the end of its symlink chain (even a dangling one), or `file` itself. */
async function linkTarget(file: string): Promise<string> {
  let p = file;
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = await lstat(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return p;
      throw e;
    }
    if (!st.isSymbolicLink()) return p;
    p = resolve(dirname(p), await readlink(p));
  }
  throw new Error(`${file}: too many levels of symbolic links`);
}

const exists = (p: string) => stat(p).then(() => true, () => false);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const ignoreMissing = (e: NodeJS.ErrnoException) => {
  if (e.code !== 'ENOENT') throw e;
};

/** One change at a time per settings file in this process. */
const chains = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const run = (chains.get(key) ?? Promise.resolve()).catch(() => {}).then(fn);
  const tail = run.catch(() => {});
  chains.set(key, tail);
  void tail.then(() => chains.get(key) === tail && chains.delete(key));
  return run;
}
