// A run of a user other than the agent's owner (run.start `guest`) must not get the owner's own engine
// settings: Claude Code's user settings (~/.claude/settings.json) hold the owner's permission rules
// (tools allowed without asking), hooks and defaults, and its MCP servers the owner's tokens. Such a
// run is started with --setting-sources=project,local (the agent's directory's settings stay: the
// owner set them for this agent), --strict-mcp-config (no MCP server) and --settings=<file> holding
// only the model settings the hub manages (the six env keys of the user settings, settings.ts), in a
// 0600 file that lives as long as the run.
import { chmodSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANAGED_KEYS, SETTINGS_FILE } from './settings.js';

export interface GuestSettings {
  /** Argv additions (each one element, `--flag=value`). */
  args: string[];
  /** Deletes the settings file (safe to call twice). */
  remove(): void;
}

/** The managed env keys of the user settings, as the engine would read them; {} when there is no readable file. */
export function managedEnv(claudeConfigDir: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(claudeConfigDir, SETTINGS_FILE), 'utf8'));
  } catch {
    return {};
  }
  const env = (parsed as { env?: unknown } | null)?.env;
  const out: Record<string, string> = {};
  if (!env || typeof env !== 'object') return out;
  for (const k of MANAGED_KEYS) {
    const v = (env as Record<string, unknown>)[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** Writes the run's settings file under `dir` (created 0700) and answers the engine's extra argv. */
export function guestSettings(runId: string, claudeConfigDir: string, dir: string): GuestSettings {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The run id is the hub's: only its safe characters name the file.
  const file = join(dir, `guest-${runId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100)}-${process.pid}.json`);
  writeFileSync(file, JSON.stringify({ env: managedEnv(claudeConfigDir) }), { mode: 0o600 });
  chmodSync(file, 0o600); // a file left by an earlier process of this pid kept its mode
  let removed = false;
  return {
    args: ['--setting-sources=project,local', '--strict-mcp-config', `--settings=${file}`],
    remove() {
      if (removed) return;
      removed = true;
      try {
        unlinkSync(file);
      } catch {
        /* gone already */
      }
    },
  };
}
