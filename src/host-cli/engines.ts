// Which engines this machine can run. Claude Code counts only where a
// `claude` executable is found: $CLAUDE_BIN, else the first on PATH.
import { accessSync, constants, statSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { delimiter, join } from 'node:path';
import type { Engine } from '../../host-protocol/frames.js';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export function findClaude(env = process.env): string | undefined {
  if (env.CLAUDE_BIN) return executable(env.CLAUDE_BIN) ? env.CLAUDE_BIN : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const f = join(dir, 'claude');
    if (executable(f)) return f;
  }
  return undefined;
}

function versionOf(bin: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: 5000 }, (err, stdout) => {
      const v = err ? undefined : String(stdout).trim().split(/\s+/)[0];
      resolve(v ? v.slice(0, 120) : undefined);
    });
  });
}

export interface Detected {
  engines: Engine[];
  claudeBin: string | undefined;
}

export async function detectEngines(env = process.env): Promise<Detected> {
  const claudeBin = findClaude(env);
  if (!claudeBin) return { engines: [], claudeBin };
  const version = await versionOf(claudeBin);
  return { engines: [{ id: 'claude-code', displayName: 'Claude Code', ...(version ? { version } : {}) }], claudeBin };
}
