// The engines' process groups of this agent-host, recorded so the next one can stop them. An
// agent-host killed outright (SIGKILL, the OOM killer) cannot stop its engines, and they — with
// whatever their tools started — would run on for turns the hub has ended. Each agent-host keeps
// $AGENT_HOST_HOME/engines/<its pid>.json (the groups of its runs in progress, written on every
// start and end of one); at start, a file whose agent-host is gone, written since this boot, has
// its groups stopped (SIGKILL: nothing is left to report to). Linux only: a group is ours only
// while its leader is the very process recorded (its start time in /proc), or has exited (a
// group's id is not given to a new process while any member lives).
import { mkdirSync, readFileSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homeDir } from './home.js';

interface Recorded {
  /** The engine's pid, its group's id. */
  pid: number;
  /** Its start time, clock ticks after boot (/proc/<pid>/stat field 22). */
  start: number;
}

interface GroupsFile {
  owner: number;
  boot: string;
  groups: Recorded[];
}

const LINUX = process.platform === 'linux';

/** A process's start time in clock ticks after boot; undefined when there is no such process (or no /proc). */
export function processStart(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a process group exists and is ours to signal. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false; // ESRCH: gone; EPERM: not ours
  }
}

export class EngineGroups {
  private readonly dir: string;
  private readonly file: string;
  private readonly groups = new Map<number, number>();
  /** This boot's id; undefined where there is no /proc, and then nothing is recorded or stopped. */
  private readonly boot = LINUX ? bootId() : undefined;

  constructor(env = process.env) {
    this.dir = join(homeDir(env), 'engines');
    this.file = join(this.dir, `${process.pid}.json`);
  }

  /** An engine started in a group of its own (its pid is the group's id). */
  add(pid: number): void {
    if (!this.boot) return;
    const start = processStart(pid);
    if (start === undefined) return;
    this.groups.set(pid, start);
    this.save();
  }

  /** Its run ended: the group is no longer this agent-host's to stop. */
  remove(pid: number): void {
    if (this.groups.delete(pid)) this.save();
  }

  /** Stops the groups of agent-hosts that are gone; what was stopped, per agent-host. */
  stopLeftovers(): Array<{ owner: number; groups: number }> {
    if (!this.boot) return [];
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => /^\d+\.json$/.test(n));
    } catch {
      return [];
    }
    const stopped: Array<{ owner: number; groups: number }> = [];
    for (const name of names) {
      const path = join(this.dir, name);
      let f: GroupsFile;
      try {
        f = JSON.parse(readFileSync(path, 'utf8')) as GroupsFile;
      } catch {
        continue; // being written (a temp file is renamed in) or damaged: left for its owner
      }
      if (!Number.isInteger(f?.owner) || f.owner === process.pid || alive(f.owner)) continue;
      let n = 0;
      if (f.boot === this.boot && Array.isArray(f.groups)) {
        for (const g of f.groups) if (this.stopIfOurs(g)) n++;
      }
      try {
        unlinkSync(path);
      } catch {
        // another agent-host starting at the same moment took it
      }
      if (n) stopped.push({ owner: f.owner, groups: n });
    }
    return stopped;
  }

  private stopIfOurs(g: Recorded): boolean {
    if (!Number.isInteger(g?.pid) || g.pid <= 1 || !groupAlive(g.pid)) return false;
    const start = processStart(g.pid);
    if (start !== undefined && start !== g.start) return false; // that pid is another process now
    try {
      process.kill(-g.pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  }

  private save(): void {
    if (!this.boot) return;
    try {
      if (!this.groups.size) return void unlinkSync(this.file);
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, JSON.stringify({ owner: process.pid, boot: this.boot, groups: [...this.groups].map(([pid, start]) => ({ pid, start })) } satisfies GroupsFile), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch {
      // A record that cannot be written only loses the clean-up after a crash; the run goes on.
    }
  }
}
