#!/usr/bin/env node
// agent-host: pairs this machine with an Agent Hub and holds its channel.
//   agent-host pair --hub URL --key PAIRKEY [--name NAME]
//   agent-host run [--work-root DIR] [--capacity N] [--hub URL --pair-key KEY [--name NAME]]
import { parseArgs } from 'node:util';
import { hostname, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { statSync } from 'node:fs';
import { pair } from './pair.js';
import { loadPairing, credentialPath } from './home.js';
import { detectEngines } from './engines.js';
import { Channel } from './channel.js';
import { handleFrame, type HostState } from './handlers.js';
import { CLI_VERSION } from './version.js';

const HELP: Record<string, string> = {
  main: `agent-host ${CLI_VERSION}: connects this machine to an Agent Hub so its agents run here.

Usage:
  agent-host pair --hub URL --key PAIRKEY [--name NAME]   pair once with a key from POST /api/v1/hosts/pair-key
  agent-host run [--work-root DIR] [--capacity N]         hold the channel (reconnects by itself)
  agent-host run --hub URL --pair-key KEY [...]           pair and run in one step
  agent-host <command> --help                             help for one command

Environment:
  AGENT_HOST_HOME    where the credential is kept (default ~/.agent-host)
  CLAUDE_BIN         the claude executable (default: claude on PATH)
  CLAUDE_CONFIG_DIR  Claude Code's settings directory (default ~/.claude)
`,
  pair: `agent-host pair --hub URL --key PAIRKEY [--name NAME]

Exchanges a single-use pair key (from POST /api/v1/hosts/pair-key, valid 10 minutes) for
this host's credential, stored in $AGENT_HOST_HOME/credential.json (mode 0600).

  --hub URL      the hub's base URL, e.g. http://127.0.0.1:8080
  --key PAIRKEY  the pair key
  --name NAME    how the host is listed (default: this machine's hostname)
`,
  run: `agent-host run [--work-root DIR] [--capacity N] [--hub URL --pair-key KEY [--name NAME]]

Holds the channel to the hub, runs the agents' turns, and reconnects with backoff.
Prints one line on every connect and disconnect.

  --work-root DIR   agents work in directories under DIR; nothing outside it is listed (default: current directory)
  --capacity N      runs at the same time (default 1)
  --hub URL         with --pair-key: pair first (otherwise the stored hub is used)
  --pair-key KEY    pair with this key before running
  --name NAME       host name when pairing (default: hostname)
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

async function cmdPair(argv: string[]): Promise<number> {
  const v = parse(argv, { hub: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' } });
  if (v.help) return void process.stdout.write(HELP.pair), 0;
  if (!v.hub || !v.key) throw new UsageError('pair needs --hub and --key');
  const { pairing, file } = await pair(String(v.hub), String(v.key), String(v.name ?? hostname()));
  out(`paired with ${pairing.hub} as ${pairing.hostId}; credential stored in ${file}`);
  return 0;
}

async function cmdRun(argv: string[]): Promise<number> {
  const v = parse(argv, { 'work-root': { type: 'string' }, capacity: { type: 'string' }, hub: { type: 'string' }, 'pair-key': { type: 'string' }, name: { type: 'string' } });
  if (v.help) return void process.stdout.write(HELP.run), 0;
  const capacity = v.capacity === undefined ? 1 : Number(v.capacity);
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > 1000) throw new UsageError('--capacity must be an integer from 1 to 1000');
  const workRoot = resolve(String(v['work-root'] ?? process.cwd()));
  try {
    if (!statSync(workRoot).isDirectory()) throw new Error();
  } catch {
    throw new UsageError(`--work-root ${workRoot} is not a directory`);
  }
  if (v['pair-key']) {
    if (!v.hub) throw new UsageError('--pair-key needs --hub');
    const { pairing, file } = await pair(String(v.hub), String(v['pair-key']), String(v.name ?? hostname()));
    out(`paired with ${pairing.hub} as ${pairing.hostId}; credential stored in ${file}`);
  }
  const pairing = loadPairing();
  if (!pairing) throw new UsageError(`not paired yet (no ${credentialPath()}); run agent-host pair first`);
  if (v.hub && !v['pair-key']) pairing.hub = String(v.hub).replace(/\/+$/, '');

  const detected = await detectEngines();
  const state: HostState = {
    workRoot,
    claudeConfigDir: process.env.CLAUDE_CONFIG_DIR || join(homedir(), '.claude'),
    claudeBin: detected.claudeBin,
    engines: detected.engines,
    runs: new Map(),
  };
  if (!state.claudeBin) out('no claude executable found (CLAUDE_BIN or PATH): no engine to offer');
  const channel = new Channel({
    hub: pairing.hub,
    credential: pairing.credential,
    name: pairing.name,
    capacity,
    engines: () => state.engines,
    running: () => [...state.runs.keys()],
    onFrame: (f, ch) => handleFrame(f, ch, state),
    status: out,
  });
  const stop = () => {
    for (const r of state.runs.values()) r.abort();
    channel.stop();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  channel.start();
  const end = await channel.done;
  return end.code === 0 ? 0 : 1;
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
