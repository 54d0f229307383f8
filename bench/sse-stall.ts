// Hub RSS with N SSE readers that stop reading (issue 10, hole 6). A hub in a
// child process; one session whose turn a simulated host streams; N raw TCP
// readers open GET /sessions/{id}/events and never read. The host streams
// STALL_MB of deltas; the hub's RSS, open streams and bytes it holds for SSE
// readers are read before and after. Env: STALL_READERS (1000), STALL_MB (6),
// SSE_BUFFER_BYTES (hub default). `npx tsx bench/sse-stall.ts`
import { fork } from 'node:child_process';
import net from 'node:net';
import { pairHost, connectFakeHost, eventually } from '../test/helpers/host.js';

const N = Number(process.env.STALL_READERS ?? 1000);
const MB = Number(process.env.STALL_MB ?? 6);
const config: Record<string, unknown> = { sseMaxStreamsPerAccount: 0 };
if (process.env.SSE_BUFFER_BYTES) config.sseBufferBytes = Number(process.env.SSE_BUFFER_BYTES);

const child = fork(new URL('./hub-child.ts', import.meta.url), [], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, BENCH_HUB_CONFIG: JSON.stringify(config), BENCH_HUB_USER: '1' },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const next = (t: string) => new Promise<any>((r) => child.on('message', function h(m: any) { if (m.t === t) { child.off('message', h); r(m); } }));
const ready = await next('ready');
const stats = async () => { child.send({ t: 'stats' }); return next('stats'); };
const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(ready.url + path, { method, headers: { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
};

const { hostId, credential } = await pairHost(ready, ready.key);
const host = await connectFakeHost(ready, credential, { capacity: 1 });
const agent = await eventually(async () => {
  const r = await api('POST', '/api/v1/agents', { name: 'stall', scope: 'private', hostId, engine: 'claude-code', workDir: 'p' });
  return r.status === 201 ? r : undefined;
}, 5000, 50);
const c = await api('POST', '/api/v1/sessions', { agentId: agent.body.data.id, content: 'go' });
const sid = c.body.sessionId;
const start: any = await host.next((f: any) => f.t === 'run.start');
host.send({ t: 'run.init', runId: start.runId, engineSessionId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', model: 'm' });

const before = await stats();
const u = new URL(ready.url);
const sockets: net.Socket[] = [];
for (let i = 0; i < N; i++) {
  const s = net.connect(Number(u.port), u.hostname);
  s.pause();
  s.on('error', () => undefined);
  s.write(`GET /api/v1/sessions/${sid}/events HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${ready.key}\r\n\r\n`);
  sockets.push(s);
}
await eventually(async () => ((await stats()).streams >= N ? true : undefined), 30_000, 200);
const opened = await stats();
const chunk = 'x'.repeat(32 * 1024);
const frames = Math.round((MB * 1024 * 1024) / chunk.length);
let peak = opened.rss;
let peakHeld = 0;
for (let i = 0; i < frames; i++) {
  host.send({ t: 'run.delta', runId: start.runId, text: chunk });
  if (i % 8 === 7) {
    await new Promise((r) => setTimeout(r, 50));
    const s = await stats();
    peak = Math.max(peak, s.rss);
    peakHeld = Math.max(peakHeld, s.sseBuffered);
  }
}
await new Promise((r) => setTimeout(r, 2000));
const after = await stats();
peak = Math.max(peak, after.rss);
const mb = (b: number) => (b / 1048576).toFixed(1);
console.log(`| ${N} | ${MB} | ${mb(before.rss)} | ${mb(opened.rss)} | ${mb(peak)} | ${mb(after.rss)} | ${mb(peakHeld)} | ${after.streams} |`);
for (const s of sockets) s.destroy();
host.close();
child.send({ t: 'close' });
await new Promise((r) => child.on('exit', r));
process.exit(0);
