// The parent's side of a baseline server (bench/baselines/relay.ts,
// fanout.ts): forks it into a process of its own, so it has a core to
// itself as the hub child does, and waits for the port it listens on.
// Protocol: child → {t: 'ready', port}; parent → {t: 'close'}; and the
// event-loop delay windows of bench/loop-window.ts, as the hub child has them.
import { fork } from 'node:child_process';
import type { LoopDelay } from '../delta-child.js';
import { loopWindow } from '../loop-window.js';

export interface Baseline {
  url: string;
  /** The server process's id (its CPU time in /proc). */
  pid?: number;
  /** Opens ('reset') or closes ('read', answered with the delay) an event-loop delay window. */
  loopDelay(op: 'reset' | 'read'): Promise<LoopDelay | undefined>;
  close(): Promise<void>;
}

export async function forkBaseline(file: 'relay' | 'fanout', env: Record<string, string> = {}): Promise<Baseline> {
  const child = fork(new URL(`./${file}.ts`, import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let loopWaiter: ((l: LoopDelay) => void) | undefined;
  const port = await new Promise<number>((res, rej) => {
    child.once('exit', (c) => rej(new Error(`baseline ${file} exited: ${c}`)));
    child.on('message', (m: { t: string; port: number; loop: LoopDelay }) => {
      if (m.t === 'ready') res(m.port);
      else if (m.t === 'loop') loopWaiter?.(m.loop);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    loopDelay: (op) => new Promise((res) => {
      if (op === 'reset') return void child.send({ t: 'loop-reset' }, () => res(undefined));
      loopWaiter = (l) => ((loopWaiter = undefined), res(l));
      child.send({ t: 'loop-read' });
    }),
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
  const loop = loopWindow();
  process.on('message', (m: { t: string }) => (m.t === 'close' ? exit() : loop(m)));
  process.on('disconnect', exit);
  process.send!({ t: 'ready', port });
}
