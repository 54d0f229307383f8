// A Redis server of a test's own (redis-server on a free port, nothing
// saved), for fault tests that kill and restart it: never the shared Redis.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from './ports.js';
import { eventually } from './host.js';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export interface OwnRedis {
  url: string;
  /** Starts it (again, empty) on the same port and resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGKILL, and resolves once it is gone. */
  kill(): Promise<void>;
  /** Started and not killed since. */
  readonly started: boolean;
}

/** `args`: more of redis-server's options (e.g. `['--requirepass', 'x']`). */
export async function ownRedis(args: string[] = []): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    get started() {
      return proc !== undefined;
    },
    async start() {
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
      await eventually(() => new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
        s.on('error', () => resolve(false));
      }), 10_000, 50);
    },
    async kill() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null) return;
      const gone = new Promise((res) => p.once('exit', res));
      p.kill('SIGKILL');
      await gone;
    },
  };
}
