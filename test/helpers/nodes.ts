// Hub nodes as separate processes (`node --import tsx src/main.ts`), and a
// tiny TCP balancer in front of them that fails over to the next node when
// one stops answering — the multi-node topology of docker/compose.yml on
// loopback.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface HubNode {
  name: string;
  port: number;
  url: string;
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts a hub process and resolves once GET /api/v1/health answers 200. */
export async function startNode(name: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<HubNode> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: mkdtempSync(join(tmpdir(), `hub-${name}-`)), LOG_LEVEL: 'warn', PLAN_QUOTAS: 'off', ...env, PORT: String(port), HOST: '127.0.0.1', NODE_ID: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | string>((r) => proc.on('exit', (code, sig) => r(code ?? sig ?? -1)));
  const node: HubNode = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    proc,
    output: () => out,
    exited,
    kill: (sig) => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    },
  };
  const end = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`hub ${name} exited during start:\n${out}`);
    try {
      const r = await fetch(`${node.url}/api/v1/health`);
      if (r.status === 200) return node;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > end) {
      node.kill('SIGKILL');
      throw new Error(`hub ${name} not healthy in ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A TCP balancer: each connection goes to the first node that accepts it. */
export async function startBalancer(ports: number[]): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const attempt = (i: number) => {
      if (i >= ports.length) return client.destroy();
      const up = connect(ports[i], '127.0.0.1');
      up.once('error', () => attempt(i + 1));
      up.once('connect', () => {
        up.removeAllListeners('error');
        sockets.add(up);
        up.on('close', () => sockets.delete(up));
        up.on('error', () => client.destroy());
        client.on('error', () => up.destroy());
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** fetch + JSON, for tests talking to a node by URL. */
export async function call(base: string, method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}
