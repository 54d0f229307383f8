// A PostgreSQL cluster of the test's own (initdb + pg_ctl on a spare port, in
// a temp dir), which the test may stop and start: never the shared server.
// As root, the binaries run as the `postgres` user (initdb refuses root).
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './nodes.js';

export interface PrivatePostgres {
  url: string;
  /** Stops the server (`fast`: connections are closed at once). */
  stop(): void;
  start(): void;
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
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    execFileSync(file, argv, { stdio: 'pipe', cwd: dir });
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50`;
  let running = false;
  const pg: PrivatePostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start() {
      run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
      running = true;
    },
    stop() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
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
  pg.start();
  return pg;
}
