// A PostgreSQL cluster of the test's own (initdb + pg_ctl on a spare port, in
// a temp dir), which the test may stop and start: never the shared server.
// As root, the binaries run as the `postgres` user (initdb refuses root).
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface PrivatePostgres {
  url: string;
  /** Stops the server (`fast`: connections are closed at once). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it if running and removes its files. */
  destroy(): void;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const v = readdirSync(root).filter((d) => existsSync(join(root, d, 'bin/pg_ctl'))).sort((a, b) => Number(b) - Number(a))[0];
  return v ? join(root, v, 'bin') : undefined;
}

const asRoot = userInfo().uid === 0;

/** Why a private cluster cannot be started here, if it cannot. */
export function privatePostgresSkipReason(): string | undefined {
  if (!binDir()) return 'no initdb/pg_ctl under /usr/lib/postgresql/*/bin';
  if (asRoot && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and no postgres user to run initdb as';
  return undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const dir = mkdtempSync(join(tmpdir(), 'private-pg-'));
  const data = join(dir, 'data');
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const argv = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]);
  const run = (cmd: string, args: string[]) => void execFileSync(...argv(cmd, args), { stdio: 'pipe', cwd: dir });
  // Not blocking the test's event loop: its load generator keeps going while the server stops or starts.
  const runAsync = async (cmd: string, args: string[]) => void (await promisify(execFile)(...argv(cmd, args), { cwd: dir }));
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50`;
  let running = false;
  const pg: PrivatePostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      running = true;
      await runAsync('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
    },
    async stop() {
      await runAsync('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      running = false;
    },
    destroy() {
      if (running) {
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } catch {
          /* already gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}
