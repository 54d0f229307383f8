// The small local file through which `agent-host status` sees a running `agent-host run`:
// $AGENT_HOST_HOME/status.json, rewritten atomically (temp file + rename, mode 0600) on every
// change, removed at exit. It never holds the credential or a prompt; the pid tells a
// stale file (a killed process) from a live one.
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homeDir } from './home.js';

export interface RunInProgress {
  runId: string;
  sessionId: string;
  startedAt: string;
}

export interface HostStatus {
  pid: number;
  hub: string;
  name: string;
  /** Since this process started. */
  startedAt: string;
  connected: boolean;
  hostId?: string;
  /** When the channel last came up or went down. */
  since: string;
  /** The last reason the channel went down (a close code or a network error). */
  lastError?: string;
  runs: RunInProgress[];
}

export const statusPath = (env = process.env) => join(homeDir(env), 'status.json');

export function writeStatus(s: HostStatus, env = process.env): void {
  const file = statusPath(env);
  mkdirSync(homeDir(env), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(s, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

/** Removes the file if it is this process's (another `run` on the same home may have written it since). */
export function removeStatus(env = process.env): void {
  try {
    const s = JSON.parse(readFileSync(statusPath(env), 'utf8')) as HostStatus;
    if (s?.pid === process.pid) unlinkSync(statusPath(env));
  } catch {
    // already gone
  }
}

/** The status of a live `run`, or undefined (no file, unreadable, or its process is gone). */
export function readLiveStatus(env = process.env): HostStatus | undefined {
  let s: HostStatus;
  try {
    s = JSON.parse(readFileSync(statusPath(env), 'utf8')) as HostStatus;
  } catch {
    return undefined;
  }
  if (!s || typeof s !== 'object' || !Number.isInteger(s.pid) || s.pid <= 0 || !pidAlive(s.pid)) return undefined;
  return { ...s, runs: Array.isArray(s.runs) ? s.runs : [] };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
