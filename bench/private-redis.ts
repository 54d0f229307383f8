// A redis-server of a bench run's own on a free port (nothing saved), so Redis's
// counters hold only the run's traffic; the shared REDIS_URL when there is no
// redis-server binary or BENCH_REDIS=shared (its counters then include other clients').
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sh = (cmd: string) => {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
};

export const hasRedisServer = () => sh('command -v redis-server') !== '?';

export async function privateRedis(): Promise<{ url: string; proc?: ChildProcess; where: string }> {
  if (process.env.BENCH_REDIS === 'shared' || !hasRedisServer()) {
    if (!process.env.REDIS_URL) throw new Error('no redis-server binary and REDIS_URL is not set');
    return { url: process.env.REDIS_URL, where: `shared Redis at REDIS_URL (its counters include other clients' traffic)` };
  }
  const port = await new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => {});
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      return { url, proc, where: `a private redis-server ${sh('redis-server --version').split(' ')[2] ?? ''} started for the run` };
    } catch {
      r.disconnect();
      await sleep(100);
    }
  }
  proc.kill();
  throw new Error('private redis-server did not answer');
}
