#!/usr/bin/env node
// agent-host: pairs this machine with an Agent Hub and holds its channel.
//   agent-host pair --hub URL [--key PAIRKEY] [--name NAME]
//   agent-host run [--work-root DIR] [--capacity N] [--verbose] [--hub URL [--pair-key KEY] [--name NAME]]
//   agent-host status
// A pair key may come from AGENT_HOST_PAIR_KEY in place of --key / --pair-key (out of the process list).
import { parseArgs } from 'node:util';
import { homedir, hostname } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { statSync } from 'node:fs';
import { pair, pairedWith } from './pair.js';
import { loadPairing, credentialPath, homeDir } from './home.js';
import { detectEngines } from './engines.js';
import { Channel } from './channel.js';
import { handleFrame, type HostState } from './handlers.js';
import { CLI_VERSION } from './version.js';
import { Activity } from './activity.js';
import { readLiveStatus, removeStatus } from './status-file.js';
import { EngineGroups } from './engine-groups.js';
import { claudeConfigDirOf } from './settings.js';
import { realPathOf, removeLeftovers } from './guest-settings.js';

/** How long Ctrl-C / SIGTERM waits for the aborted runs' run.end to reach the hub. */
const STOP_WAIT_MS = 10_000;

const HELP: Record<string, string> = {
  main: `agent-host ${CLI_VERSION}: connects this machine to an Agent Hub so its agents run here.

Usage:
  agent-host pair --hub URL [--name NAME]                 pair once with the key in AGENT_HOST_PAIR_KEY
  agent-host run [--work-root DIR] [--capacity N]         hold the channel (reconnects by itself)
  agent-host run --hub URL [...]                          with AGENT_HOST_PAIR_KEY set: pair and run in one step
  agent-host status                                       the pairing, whether run is connected, runs in progress
  agent-host <command> --help                             help for one command

Environment:
  AGENT_HOST_PAIR_KEY  a pair key from POST /api/v1/hosts/pair-key (--key / --pair-key also take one,
                     but every user of this machine can read a command line while it runs)
  AGENT_HOST_HOME    where the credential is kept (default ~/.agent-host)
  CLAUDE_BIN         the claude executable (default: claude on PATH)
  CLAUDE_CONFIG_DIR  Claude Code's settings directory (default ~/.claude)
`,
  pair: `agent-host pair --hub URL [--key PAIRKEY] [--name NAME]

Exchanges a single-use pair key (from POST /api/v1/hosts/pair-key, valid 10 minutes) for
this host's credential, stored in $AGENT_HOST_HOME/credential.json (mode 0600). The key is
read from AGENT_HOST_PAIR_KEY: a command line is readable by every user of the machine.

  --hub URL      the hub's base URL, e.g. http://127.0.0.1:8080
  --key PAIRKEY  the pair key, in place of AGENT_HOST_PAIR_KEY
  --name NAME    how the host is listed (default: this machine's hostname)
`,
  run: `agent-host run [--work-root DIR] [--capacity N] [--verbose] [--hub URL [--pair-key KEY] [--name NAME]]

Holds the channel to the hub, runs the agents' turns, and reconnects with backoff.
Prints one line per event: connecting, connected, disconnected (with the network error),
a run started or ended (session, duration, outcome), settings applied or reverted.
Ctrl-C (or SIGTERM) aborts the runs in progress, waits up to ${STOP_WAIT_MS / 1000}s for their end to
reach the hub, then exits; a second Ctrl-C exits at once.

  --work-root DIR   agents work in directories under DIR; nothing outside it is listed (default: current directory)
  --capacity N      runs at the same time (default 1)
  --hub URL         with a pair key: pair first (otherwise the stored hub is used)
  --pair-key KEY    pair with this key before running, in place of AGENT_HOST_PAIR_KEY; a key
                    the stored pairing came from is not used again (the same command restarts)
  --name NAME       host name when pairing (default: hostname)
  --verbose         also print each run's prompt (first 200 characters)

Other users' runs (guests of a shared or public agent) get only the variables of this environment
an engine needs (PATH, HOME, locale, proxies, ANTHROPIC_*, CLAUDE_CODE_* …); AGENT_HOST_GUEST_ENV
lists more for them (names or PREFIX*, comma-separated; * for all). Your own runs get everything.
`,
  status: `agent-host status

Shows the pairing (hub, host id, credential file), whether agent-host run is running
and connected, and the runs in progress (read from $AGENT_HOST_HOME/status.json,
which run keeps up to date). Exits 1 when not paired.
`,
};

const out = (line: string) => process.stdout.write(`agent-host: ${line}\n`);
class UsageError extends Error {}

function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean' } }, allowPositionals: false, strict: true }).values as Record<string, string | boolean | undefined>;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * The pair key: from `flag` or from AGENT_HOST_PAIR_KEY, which keeps it out of the process list. Taken out
 * of the environment as it is read: engines inherit agent-host's environment (the owner's runs whole).
 */
function pairKeyOf(flag: string | boolean | undefined, flagName: string): string | undefined {
  const env = process.env.AGENT_HOST_PAIR_KEY || undefined;
  delete process.env.AGENT_HOST_PAIR_KEY;
  if (flag !== undefined && env) throw new UsageError(`a pair key in both ${flagName} and AGENT_HOST_PAIR_KEY: give one`);
  return flag === undefined ? env : String(flag);
}

async function cmdPair(argv: string[]): Promise<number> {
  const v = parse(argv, { hub: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' } });
  if (v.help) return void process.stdout.write(HELP.pair), 0;
  const key = pairKeyOf(v.key, '--key');
  if (!v.hub || !key) throw new UsageError('pair needs --hub and a pair key (AGENT_HOST_PAIR_KEY, or --key)');
  const kept = loadPairing();
  if (kept && pairedWith(kept, key, String(v.hub))) return out(`already paired with this pair key as ${kept.hostId}; credential in ${credentialPath()}`), 0;
  const { pairing, file } = await pair(String(v.hub), key, String(v.name ?? hostname()));
  out(`paired with ${pairing.hub} as ${pairing.hostId}; credential stored in ${file}`);
  return 0;
}

/**
 * Guests work in their agent's directory under the work root (by default the work root itself): a root at
 * or above the home puts the whole home in their reach, and their rules cover only the credential places
 * agent-host knows of (guest-settings.ts).
 */
function warnIfHome(workRoot: string): void {
  // Compared as the kernel resolves them: a home reached through a link is still the home.
  const home = realPathOf(resolve(homedir()));
  const root = realPathOf(workRoot);
  if (root !== home && !home.startsWith(root.endsWith(sep) ? root : root + sep)) return;
  out(`warning: the work root ${workRoot} ${root === home ? 'is' : 'holds'} your home directory: public and shared agents' guests work under it, kept only from agent-host's files, Claude Code's configuration and well-known credential places (~/.ssh, ~/.aws, …); give agent-host a directory of projects instead (--work-root DIR)`);
}

/** Paths a guest's deny rules must name; one holding a parenthesis makes every guest's run refused (guest-settings.ts). */
function warnIfUnconfinable(workRoot: string): void {
  const named = [workRoot, claudeConfigDirOf(), homeDir(), homedir()].flatMap((p) => [resolve(p), realPathOf(resolve(p))]).find((p) => /[()]/.test(p));
  if (named) out(`warning: ${named} holds a parenthesis, which Claude Code's permission rules cannot name reliably: public and shared agents' guests' runs will be refused; rename it or run agent-host elsewhere`);
}

async function cmdRun(argv: string[]): Promise<number> {
  const v = parse(argv, { 'work-root': { type: 'string' }, capacity: { type: 'string' }, hub: { type: 'string' }, 'pair-key': { type: 'string' }, name: { type: 'string' }, verbose: { type: 'boolean' } });
  if (v.help) return void process.stdout.write(HELP.run), 0;
  const capacity = v.capacity === undefined ? 1 : Number(v.capacity);
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > 1000) throw new UsageError('--capacity must be an integer from 1 to 1000');
  const workRoot = resolve(String(v['work-root'] ?? process.cwd()));
  try {
    if (!statSync(workRoot).isDirectory()) throw new Error();
  } catch {
    throw new UsageError(`--work-root ${workRoot} is not a directory`);
  }
  warnIfHome(workRoot);
  warnIfUnconfinable(workRoot);
  const key = pairKeyOf(v['pair-key'], '--pair-key');
  const kept = key ? loadPairing() : undefined;
  if (key && kept && pairedWith(kept, key, v.hub === undefined ? undefined : String(v.hub))) {
    out(`already paired with this pair key as ${kept.hostId}; going on with that pairing`);
  } else if (key) {
    if (!v.hub) throw new UsageError('a pair key needs --hub');
    const { pairing, file } = await pair(String(v.hub), key, String(v.name ?? hostname()));
    out(`paired with ${pairing.hub} as ${pairing.hostId}; credential stored in ${file}`);
  }
  const pairing = loadPairing();
  if (!pairing) throw new UsageError(`not paired yet (no ${credentialPath()}); run agent-host pair first`);
  if (v.hub && !key) pairing.hub = String(v.hub).replace(/\/+$/, '');

  const detected = await detectEngines();
  const state: HostState = {
    workRoot,
    claudeConfigDir: claudeConfigDirOf(),
    runFilesDir: join(homeDir(), 'runs'),
    claudeBin: detected.claudeBin,
    engines: detected.engines,
    runs: new Map(),
    capacity,
    groups: new EngineGroups(),
  };
  // Engines a killed agent-host left running (and what their tools started): their turns are over.
  for (const l of state.groups!.stopLeftovers()) out(`stopped ${l.groups} engine process group${l.groups === 1 ? '' : 's'} left by agent-host pid ${l.owner}`);
  // Guest runs' settings files an agent-host killed mid-run left behind (each holds a copy of the endpoint key).
  const stale = removeLeftovers(state.runFilesDir!);
  if (stale) out(`removed ${stale} guest run settings file${stale === 1 ? '' : 's'} left by an earlier agent-host`);
  if (!state.claudeBin) out('no claude executable found (CLAUDE_BIN or PATH): no engine to offer');
  state.activity = new Activity({ hub: pairing.hub, name: pairing.name, verbose: v.verbose === true, out });
  process.once('exit', () => removeStatus());
  // Last resort: a bug must not leave engines running that nothing can stop any more.
  process.on('uncaughtException', (e) => {
    process.stderr.write(`agent-host: fatal: ${(e as Error)?.stack ?? String(e)}\n`);
    killRuns(state);
    process.exit(1);
  });
  const channel = new Channel({
    hub: pairing.hub,
    credential: pairing.credential,
    name: pairing.name,
    capacity,
    engines: () => state.engines,
    running: () => [...state.runs.keys()],
    onFrame: (f, ch) => handleFrame(f, ch, state),
    status: out,
    onUp: (hostId) => state.activity?.connected(hostId),
    onDown: (why) => state.activity?.disconnected(why),
  });
  process.on('SIGINT', () => void stop(state, channel));
  process.on('SIGTERM', () => void stop(state, channel));
  // The terminal closing: engines run in process groups of their own (runner.ts), so its hang-up
  // no longer reaches them; stop them as for SIGTERM instead of dying of the signal.
  process.on('SIGHUP', () => void stop(state, channel));
  channel.start();
  const end = await channel.done;
  killRuns(state); // runs still going here (the stop's wait ran out, or the hub said pair again) would outlive agent-host
  return end.code === 0 ? 0 : 1;
}

/**
 * First signal: abort the runs, wait (bounded) until their run.end reached the hub, so the
 * turns read `aborted` with their partial output rather than HOST_DISCONNECTED; then close.
 * A second signal exits at once.
 */
async function stop(state: HostState, channel: Channel): Promise<void> {
  if (state.stopping) {
    out('forced exit');
    killRuns(state);
    process.exit(130);
  }
  state.stopping = true;
  const runs = [...state.runs.values()];
  if (!runs.length) return channel.stop();
  out(`stopping: waiting for ${runs.length} run${runs.length === 1 ? '' : 's'} to end — press Ctrl-C again to force`);
  const deadline = Date.now() + STOP_WAIT_MS;
  for (const r of runs) r.abort();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(runs.map((r) => r.done)), new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
  clearTimeout(timer);
  const delivered = await channel.flushed(deadline - Date.now());
  if (state.runs.size || !delivered) process.stderr.write(`agent-host: stopped after ${STOP_WAIT_MS / 1000}s; the hub may not have heard the end of every run\n`);
  channel.stop();
}

/** Kills every engine at once (no grace): for exits that cannot wait for the runs to end. */
function killRuns(state: HostState): void {
  for (const r of state.runs.values()) r.kill();
}

function cmdStatus(argv: string[]): number {
  const v = parse(argv, {});
  if (v.help) return void process.stdout.write(HELP.status), 0;
  const pairing = loadPairing();
  if (!pairing) {
    out(`not paired (no ${credentialPath()}); run agent-host pair first`);
    return 1;
  }
  const lines = [`paired with ${pairing.hub} as ${pairing.hostId} (${pairing.name})`, `credential: ${credentialPath()}`];
  const s = readLiveStatus();
  if (!s) lines.push('run: not running');
  else {
    const since = ` since ${s.since}`;
    lines.push(`run: running (pid ${s.pid}), ${s.connected ? `connected to ${s.hub}${since}` : `not connected to ${s.hub}${since}${s.lastError ? ` (${s.lastError})` : ''}`}`);
    lines.push(`runs in progress: ${s.runs.length}`);
    for (const r of s.runs) lines.push(`  run ${r.runId} (session ${r.sessionId}, for ${((Date.now() - Date.parse(r.startedAt)) / 1000).toFixed(0)}s)`);
  }
  for (const l of lines) out(l);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(HELP[rest[0] ?? ''] ?? HELP.main);
    return cmd ? 0 : 2;
  }
  if (cmd === '--version') return void out(CLI_VERSION), 0;
  if (cmd === 'pair') return cmdPair(rest);
  if (cmd === 'run') return cmdRun(rest);
  if (cmd === 'status') return cmdStatus(rest);
  throw new UsageError(`unknown command ${JSON.stringify(cmd)}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`agent-host: ${(e as Error).message}\n`);
    if (e instanceof UsageError) process.stderr.write(`(agent-host --help for usage)\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
