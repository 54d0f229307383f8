// The parent's side of a baseline server (bench/baselines/relay.ts,
// fanout.ts): forks it into a process of its own, so it has a core to
// itself as the hub child does, and waits for the port it listens on.
// Protocol: child → {t: 'ready', port}; parent → {t: 'close'}.
import { fork } from 'node:child_process';

export interface Baseline {
  url: string;
  /** The server process's id (its CPU time in /proc). */
  pid?: number;
  close(): Promise<void>;
}

export async function forkBaseline(file: 'relay' | 'fanout', env: Record<string, string> = {}): Promise<Baseline> {
  const child = fork(new URL(`./${file}.ts`, import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((res, rej) => {
    child.once('exit', (c) => rej(new Error(`baseline ${file} exited: ${c}`)));
    child.on('message', (m: { t: string; port: number }) => m.t === 'ready' && res(m.port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    close: () => new Promise((res) => {
      if (child.exitCode !== null) return res();
      child.once('exit', () => res());
      child.send({ t: 'close' });
    }),
  };
}

/** The child's side: reports the port, exits when told to or when the parent goes. */
export function serveBaseline(port: number, close: () => Promise<void> | void): void {
  const exit = () => void Promise.resolve(close()).finally(() => process.exit(0));
  process.on('message', (m: { t: string }) => m.t === 'close' && exit());
  process.on('disconnect', exit);
  process.send!({ t: 'ready', port });
}
