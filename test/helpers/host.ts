// Helpers for tests and benches that need hosts: pair one over the API, hold
// a channel with a lightweight in-process protocol client, or spawn the real
// agent-host CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, chmodSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import { encodeFrame, decodeHubFrame, type HostToHub, type HubToHost, type Engine } from '../../host-protocol/index.js';
import { HOST_WS_PATH, PROTOCOL_VERSION } from '../../host-protocol/version.js';
import { Arrivals } from './waiters.js';
import { createClient, type Client, type MyAgent } from '../../src/client/index.js';

type HubLike = { url: string };
const ROOT = resolve(import.meta.dirname, '../..');

export const CLAUDE_ENGINE: Engine = { id: 'claude-code', displayName: 'Claude Code' };

/** A pair key from the API, exchanged at once: the new host's id and credential. */
export async function pairHost(t: HubLike, userKey: string, name = 'test-host'): Promise<{ hostId: string; credential: string }> {
  const { pairKey } = await createClient({ baseUrl: t.url, token: userKey }).hosts.pairKey();
  return pairWithKey(t, pairKey, name);
}

/** Exchanges a pair key (one the API or the console gave) as a new host does: its id and credential. */
export async function pairWithKey(t: HubLike, pairKey: string, name = 'test-host'): Promise<{ hostId: string; credential: string }> {
  // Raw: /hosts/pair is the host CLI's call, not the client's.
  const p = await fetch(`${t.url}/api/v1/hosts/pair`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pairKey, name }) });
  const pb: any = await p.json();
  if (p.status !== 201) throw new Error(`pair: ${p.status} ${JSON.stringify(pb)}`);
  return pb.data;
}

export const wsUrl = (httpUrl: string) => httpUrl.replace(/^http/, 'ws') + HOST_WS_PATH;

export interface FakeHostOptions {
  capacity?: number;
  engines?: Engine[];
  name?: string;
  running?: string[];
  /** Protocol version sent in hello. */
  v?: number;
  /** Skip hello (tests of the hello timeout and of frames before hello). */
  noHello?: boolean;
  /** Answers requests; default: dirs.list → one entry, engines.refresh → the engines, settings.apply → ok. Return undefined to stay silent. */
  answer?: (f: HubToHost & { id: number }) => HostToHub | undefined;
  /** Source address for the TCP connection (benches use several 127.0.0.x). */
  localAddress?: string;
  /** Ping every `welcome.heartbeatMs` (default true); false lets the hub judge the host silent. */
  heartbeat?: boolean;
}

export interface FakeHost {
  ws: WebSocket;
  hostId: string | undefined;
  /** Every frame received from the hub, in order. */
  frames: HubToHost[];
  send(f: HostToHub | Uint8Array): void;
  /** The next (or an already received) frame matching `pred`. */
  next<F extends HubToHost = HubToHost>(pred: (f: HubToHost) => boolean, timeoutMs?: number): Promise<F>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  /** App-level ping; resolves with the round trip in ms. */
  ping(): Promise<number>;
  /** When the WebSocket opened (performance.now()): the upgrade's end, before hello (benches time the two apart). */
  openedAt?: number;
  close(): void;
}

/** Opens a host channel speaking MessagePack over `ws`; resolves after `welcome` (or at open with noHello). */
export function connectFakeHost(t: HubLike | string, credential: string, opts: FakeHostOptions = {}): Promise<FakeHost> {
  const url = typeof t === 'string' ? t : wsUrl(t.url);
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${credential}` }, localAddress: opts.localAddress, perMessageDeflate: false });
  const arrivals = new Arrivals<HubToHost>('fake host: frame');
  const frames = arrivals.items;
  let pingId = 0;
  const pings = new Map<number, (ms: number) => void>();
  const engines = opts.engines ?? [CLAUDE_ENGINE];
  const closed = new Promise<{ code: number; reason: string }>((res) => ws.on('close', (code, reason) => res({ code, reason: reason.toString() })));
  const send = (f: HostToHub | Uint8Array) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(f instanceof Uint8Array ? f : encodeFrame(f));
  };
  const host: FakeHost = {
    ws,
    hostId: undefined,
    frames,
    send,
    closed,
    next(pred, timeoutMs = 5000) {
      return arrivals.until(pred, timeoutMs) as Promise<any>;
    },
    ping() {
      const id = ++pingId;
      const start = performance.now();
      return new Promise((res) => {
        pings.set(id, () => res(performance.now() - start));
        send({ t: 'ping', id });
      });
    },
    close: () => ws.close(1000),
  };
  ws.on('message', (data: Buffer) => {
    const d = decodeHubFrame(data);
    if (d.error !== undefined) return;
    const f = d.frame;
    if (f.t === 'pong') {
      pings.get(f.id)?.(0);
      pings.delete(f.id);
      return;
    }
    arrivals.push(f);
    if (f.t === 'ping') return send({ t: 'pong', id: f.id, ts: f.ts });
    if (f.t === 'dirs.list' || f.t === 'engines.refresh' || f.t === 'settings.apply') {
      const reply = (opts.answer ?? defaultAnswer(engines))(f as HubToHost & { id: number });
      if (reply) send(reply);
    }
  });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
    ws.once('open', () => {
      host.openedAt = performance.now();
      if (opts.noHello) return resolve(host);
      send({ t: 'hello', v: opts.v ?? PROTOCOL_VERSION, cli: 'fake-0.0.1', name: opts.name ?? 'fake', capacity: opts.capacity ?? 1, engines, running: opts.running });
      host.next((f) => f.t === 'welcome').then((w: any) => {
        host.hostId = w.hostId;
        if (opts.heartbeat !== false) {
          const timer = setInterval(() => send({ t: 'ping', id: ++pingId, ts: Date.now() }), w.heartbeatMs);
          timer.unref();
          void closed.then(() => clearInterval(timer));
        }
        resolve(host);
      }, reject);
      closed.then((c) => reject(Object.assign(new Error(`closed before welcome: ${c.code} ${c.reason}`), c)));
    });
  });
}

function defaultAnswer(engines: Engine[]) {
  return (f: HubToHost & { id: number }): HostToHub | undefined => {
    switch (f.t) {
      case 'dirs.list':
        return { t: 'reply', id: f.id, ok: true, data: { path: f.path, entries: [{ name: 'src', path: f.path ? `${f.path}/src` : 'src' }] } };
      case 'engines.refresh':
        return { t: 'reply', id: f.id, ok: true, data: { engines } };
      case 'settings.apply':
        return { t: 'reply', id: f.id, ok: true, data: { applied: true } };
      default:
        return undefined;
    }
  };
}

/** The fake host's engine ends every run it is started with at once, reporting `usage` (the frames it took are consumed). */
export function endRunsAtOnce(host: FakeHost, usage: { inputTokens: number; outputTokens: number }): void {
  host.ws.on('message', () => {
    for (const f of host.frames.splice(0)) {
      if (f.t === 'run.start') host.send({ t: 'run.end', runId: f.runId, ok: true, usage });
    }
  });
}

/** A tiny executable standing in for `claude` (prints stream-json lines). Returns its path. */
export function makeFakeClaude(dir = mkdtempSync(join(tmpdir(), 'fake-claude-'))): string {
  const bin = join(dir, 'claude');
  writeFileSync(
    bin,
    `#!/usr/bin/env node
if (process.argv.includes('--version')) { console.log('9.9.9 (Claude Code)'); process.exit(0); }
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const sid = 'fake-session';
  const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  out({ type: 'system', subtype: 'init', session_id: sid, model: 'fake-model' });
  out({ type: 'assistant', message: { content: [{ type: 'text', text: 'echo: ' + input.slice(0, 200) }] } });
  out({ type: 'result', subtype: 'success', is_error: false, session_id: sid, usage: { input_tokens: 3, output_tokens: 5 } });
});
`,
  );
  chmodSync(bin, 0o755);
  return bin;
}

export interface AgentHostProcess {
  proc: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the output matches (checks what was printed already). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves with the exit code (or the signal name). */
  wait(): Promise<number | string>;
}

/** Runs the real CLI (`node --import tsx src/host-cli/main.ts …`). */
export function spawnAgentHost(args: string[], env: NodeJS.ProcessEnv = {}): AgentHostProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/host-cli/main.ts'), ...args], {
    cwd: ROOT,
    // The fake engine's own variables reach guests' runs too (a guest's engine gets only what an engine needs).
    env: { ...process.env, AGENT_HOST_GUEST_ENV: 'FAKE_CLAUDE_*', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of [...listeners]) l();
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<number | string>((res) => proc.on('exit', (code, sig) => res(code ?? sig ?? -1)));
  return {
    proc,
    output: () => out,
    waitFor(re, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m[0]);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`agent-host output did not match ${re} in ${timeoutMs} ms; output:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        check();
        void exited.then(() => setTimeout(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`agent-host exited before printing ${re}; output:\n${out}`));
          }
        }, 50));
      });
    },
    kill: (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    },
    wait: () => exited,
  };
}

/**
 * Creates an agent on a host that has just said hello. The hub refuses an agent on an engine its host has
 * not reported, and the engines of a hello reach the host's record a moment after the welcome: retry until
 * they have (any other refusal shows in the error once `timeoutMs` has passed).
 */
export function agentWhenReady(c: Client, body: Parameters<Client['agents']['create']>[0], timeoutMs = 5000): Promise<MyAgent> {
  return eventually(() => c.agents.create(body), timeoutMs, 20);
}

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 10_000, stepMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Whether a process (an engine the fake host CLI started, or one it started) still runs. A zombie
 * does not: an orphan killed here may wait a while for an init that does not reap it.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)![0] !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill's answer stands
  }
}

/** The runs the fake engine (test/fixtures) logged, one JSON line each, oldest first. */
export function fakeEngineRuns<T = { pid: number; argv: string[]; cwd: string; prompt: string }>(logFile: string): T[] {
  return existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as T) : [];
}
