// A run of a user other than the agent's owner (run.start `guest`) must not get the owner's own engine
// settings: Claude Code's user settings (~/.claude/settings.json) hold the owner's permission rules
// (tools allowed without asking), hooks and defaults, and its MCP servers the owner's tokens. Such a
// run is started with --setting-sources=project,local (the agent's directory's settings stay: the
// owner set them for this agent), --strict-mcp-config (no MCP server) and --settings=<file> holding
// only the model settings the hub manages (the six env keys of the user settings, settings.ts) and
// what of the user settings only takes power away (`permissions.deny`, the switch that disables the
// bypass mode, and `permissions.ask`: a headless run has nobody to answer, so an asking tool does not
// run), in a 0600 file that lives as long as the run. Its deny rules also keep the guest's file
// tools out of agent-host's home (the host credential: whoever holds it speaks for this host to the
// hub) and Claude Code's configuration directory (the owner's login and endpoint key), and keep its
// edits out of the work directory's files that make commands run: `.claude/` (project settings apply
// to guests' runs: hooks or allow rules a guest wrote there would run commands on its next turn),
// `.git/` (`core.fsmonitor`, `core.hooksPath`, hooks: run by the next git command there, the owner's
// too) and `.mcp.json` (project MCP servers are commands the owner's runs start). Each path is named
// as given and as the kernel resolves it (a linked work root or ~/.claude: the engine sees real paths).
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { MANAGED_KEYS, SETTINGS_FILE } from './settings.js';

export interface GuestSettings {
  /** Argv additions (each one element, `--flag=value`). */
  args: string[];
  /** Deletes the settings file (safe to call twice). */
  remove(): void;
}

/** A path no deny rule can name: a guest's run there is refused rather than run with rules that do not hold. */
export class UnconfinablePathError extends Error {}

/**
 * An absolute path as a Claude Code rule path (`//path`: glob characters escaped, no trailing slash). A
 * parenthesis inside `Tool(…)` is not parsed reliably (the rule is skipped as invalid or cut short): refused.
 */
function rulePath(p: string): string {
  if (/[()]/.test(p)) throw new UnconfinablePathError(`${JSON.stringify(p)} holds a parenthesis, which Claude Code's permission rules cannot name reliably: a guest's run is not confined there`);
  return '/' + p.replace(/[\\*?[\]]/g, (c) => '\\' + c).replace(/\/+$/, '');
}

/**
 * A path's rule paths: as given and, when a link lies on the way, as the kernel resolves it (the engine
 * runs in the real directory, and a guest may name a file by either path).
 */
function rulePaths(p: string): string[] {
  const given = resolve(p);
  return [...new Set([given, realPathOf(given)])].map(rulePath);
}

/** A path as the kernel resolves it; one not there (yet): its nearest existing ancestor's real path, the rest appended. */
export function realPathOf(given: string): string {
  const rest: string[] = [];
  for (let dir = given; ; ) {
    try {
      return join(realpathSync(dir), ...rest);
    } catch {
      const up = dirname(dir);
      if (up === dir) return given;
      rest.unshift(basename(dir));
      dir = up;
    }
  }
}

/** Claude Code's Read and Edit rules for everything under an absolute directory. */
export function offLimits(dir: string): string[] {
  return rulePaths(dir).flatMap((path) => [`Read(${path}/**)`, `Edit(${path}/**)`]);
}

/**
 * Claude Code's global config file: inside its configuration directory when CLAUDE_CONFIG_DIR names one,
 * else `~/.claude.json` beside the default `~/.claude/` (the owner's MCP servers with their secrets, its
 * account): Read and Edit rules for it and its backups when the directory is a `.claude`.
 */
export function globalConfigOffLimits(claudeConfigDir: string): string[] {
  if (basename(resolve(claudeConfigDir)) !== '.claude') return [];
  return rulePaths(join(dirname(resolve(claudeConfigDir)), '.claude.json')).flatMap((file) => [`Read(${file}*)`, `Edit(${file}*)`]);
}

/**
 * Edit rules for what in a work directory makes commands run: the engine settings directories (`.claude/`)
 * and git directories (`.git/`) of it and of any directory under it, and its project MCP servers (`.mcp.json`).
 */
export function settingsReadOnly(workDir: string): string[] {
  return rulePaths(workDir).flatMap((path) => [
    `Edit(${path}/.claude/**)`, `Edit(${path}/**/.claude/**)`,
    `Edit(${path}/.git)`, `Edit(${path}/.git/**)`, `Edit(${path}/**/.git)`, `Edit(${path}/**/.git/**)`,
    `Edit(${path}/.mcp.json)`,
  ]);
}

/** Directories of a home that hold credentials: SSH, GnuPG, cloud and cluster tools, container registries, CLIs' tokens. */
const HOME_SECRET_DIRS = ['.ssh', '.gnupg', '.aws', '.azure', '.kube', '.docker', '.config/gcloud', '.config/gh', '.password-store', '.local/share/keyrings', '.terraform.d'];
/** Files of a home that hold credentials: network logins, git, package registries, databases. */
const HOME_SECRET_FILES = ['.netrc', '.git-credentials', '.npmrc', '.yarnrc', '.pypirc', '.pgpass', '.my.cnf', '.vault-token', '.config/hub', '.config/git/credentials'];

/** Read and Edit rules for the well-known credential places of a home (a work directory at or above it reached them). */
export function homeSecrets(home: string): string[] {
  return [
    ...HOME_SECRET_DIRS.flatMap((d) => offLimits(join(home, d))),
    ...HOME_SECRET_FILES.flatMap((f) => rulePaths(join(home, f)).flatMap((path) => [`Read(${path})`, `Edit(${path})`])),
  ];
}

/** File tools whose rule's specifier is a path (Claude Code applies Read and Edit rules to all of them). */
const PATH_RULE = /^(Read|Edit|Write|MultiEdit|NotebookEdit|Glob|Grep|LS)\(\/(?!\/)(.*)\)$/s;

/**
 * An owner's rule copied out of its user settings file: a `/path` specifier is relative to the settings
 * file's directory (Claude Code's rule syntax), so in the guest's file elsewhere it becomes that directory's
 * absolute `//path`; other rules (`//abs`, `~/`, relative to the working directory, commands) mean the same.
 */
export function rebased(rule: string, settingsDir: string): string {
  const m = PATH_RULE.exec(rule);
  return m ? `${m[1]}(${rulePath(resolve(settingsDir))}/${m[2]})` : rule;
}

/** What a guest's run is kept from besides Claude Code's own configuration. */
export interface GuestScope {
  /** Directories its file tools may not touch (agent-host's home). */
  privateDirs?: string[];
  /** Its work directory: what in it makes commands run is read-only. */
  workDir?: string;
  /** The owner's home: its credential places are off limits. */
  userHome?: string;
}

/**
 * What a guest's run takes of the user settings: the hub's model keys, and the owner's restrictions (deny,
 * ask, the bypass switch), then `privateDirs`, Claude Code's own configuration (its directory, its global
 * file) and the owner's home's credentials denied to its file tools, and the work directory's command-making
 * files read-only.
 */
export function guestSettingsOf(claudeConfigDir: string, { privateDirs = [], workDir, userHome }: GuestScope = {}): { env?: Record<string, string>; permissions?: { deny?: string[]; ask?: string[]; disableBypassPermissionsMode?: string } } {
  let parsed: { env?: unknown; permissions?: { deny?: unknown; ask?: unknown; disableBypassPermissionsMode?: unknown } } | null;
  try {
    parsed = JSON.parse(readFileSync(join(claudeConfigDir, SETTINGS_FILE), 'utf8'));
  } catch {
    parsed = null;
  }
  const out: ReturnType<typeof guestSettingsOf> = {};
  const env = parsed?.env;
  if (env && typeof env === 'object') {
    for (const k of MANAGED_KEYS) {
      const v = (env as Record<string, unknown>)[k];
      if (typeof v === 'string') (out.env ??= {})[k] = v;
    }
  }
  // Rules that take power away: a guest is held to them as the owner is.
  const p = parsed?.permissions;
  const owners = (v: unknown) => (Array.isArray(v) ? v.filter((r): r is string => typeof r === 'string').map((r) => rebased(r, claudeConfigDir)) : []);
  const deny = owners(p?.deny);
  for (const dir of privateDirs) deny.push(...offLimits(dir));
  deny.push(...offLimits(claudeConfigDir), ...globalConfigOffLimits(claudeConfigDir));
  if (workDir) deny.push(...settingsReadOnly(workDir));
  if (userHome) deny.push(...homeSecrets(userHome));
  if (deny.length) (out.permissions ??= {}).deny = deny;
  // Ask comes before allow, and nobody answers a guest's headless run: the owner's asks hold it as they hold the owner.
  const ask = owners(p?.ask);
  if (ask.length) (out.permissions ??= {}).ask = ask;
  if (typeof p?.disableBypassPermissionsMode === 'string') (out.permissions ??= {}).disableBypassPermissionsMode = p.disableBypassPermissionsMode;
  return out;
}

const FILE = /^guest-[A-Za-z0-9_-]*-(\d+)\.json$/;

/**
 * Deletes the settings files an agent-host that is gone left behind (killed mid-run: each holds a copy of
 * the endpoint key); a file's name carries the pid of the agent-host that wrote it. Answers how many went.
 */
export function removeLeftovers(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = FILE.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    try {
      unlinkSync(join(dir, name));
      removed++;
    } catch {
      /* gone already */
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // someone else's process: not ours to judge
  }
}

/** Writes the run's settings file under `dir` (created 0700) and answers the engine's extra argv. */
export function guestSettings(runId: string, claudeConfigDir: string, dir: string, scope: GuestScope = {}): GuestSettings {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The run id is the hub's: only its safe characters name the file, with a digest of the whole id so two
  // ids that differ only in other characters never share one (one run's end deleted the other's file).
  const tag = createHash('sha256').update(runId).digest('hex').slice(0, 12);
  const file = join(dir, `guest-${runId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}-${tag}-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(guestSettingsOf(claudeConfigDir, scope)), { mode: 0o600 });
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
