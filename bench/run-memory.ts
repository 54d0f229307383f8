// Hub memory while one host streams a flood of deltas into one run (issue 10,
// hole 4). The hub runs in a child process of its own; the bench pairs a host
// (in-process protocol client), starts a run and streams RUN_MEMORY_MB of
// run.delta frames as fast as the socket drains, then reads the hub's RSS and
// peak RSS (VmRSS / VmHWM from /proc) before, right after, and after a full GC.
//
//   node --import tsx bench/run-memory.ts            (BENCH_ROOT=<a checkout> measures that code's hub)
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(process.env.BENCH_ROOT ?? resolve(import.meta.dirname, '..'));

if (process.env.RUN_MEMORY_CHILD === '1') {
  // The hub's process: the test hub helper of the checkout being measured.
  const { startTestHub } = await import(resolve(ROOT, 'test/helpers/hub.ts'));
  const t = await startTestHub();
  const u = await t.user('bench');
  process.send!({ t: 'ready', url: t.url, key: u.key });
  process.on('message', async (m: any) => {
    if (m.t === 'gc') {
      (globalThis as any).gc?.();
      const m = process.memoryUsage();
      process.send!({ t: 'gc-done', heap: m.heapUsed / 2 ** 20, external: (m.external + m.arrayBuffers) / 2 ** 20 });
    }
    if (m.t === 'close') {
      await t.close();
      process.exit(0);
    }
  });
} else {
  const { pairHost, connectFakeHost, eventually } = await import('../test/helpers/host.js');
  const MB = Number(process.env.RUN_MEMORY_MB ?? 400);
  const CHUNK = 256 * 1024;
  const child = fork(new URL(import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx', '--expose-gc'], env: { ...process.env, RUN_MEMORY_CHILD: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ url: string; key: string }>((res) => child.on('message', (m: any) => m.t === 'ready' && res(m)));
  const mem = () => {
    const s = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = (k: string) => Number(s.match(new RegExp(`${k}:\\s+(\\d+)`))![1]);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  };
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(ready.url + path, { method, headers: { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    return { status: r.status, body: (await r.json().catch(() => ({}))) as any };
  };
  const { hostId, credential } = await pairHost({ url: ready.url }, ready.key, 'flood');
  const host = await connectFakeHost(ready.url.replace(/^http/, 'ws') + '/api/v1/hosts/ws', credential, { capacity: 1 });
  const agent = await eventually(async () => {
    const r = await api('POST', '/api/v1/agents', { name: 'flood', hostId, engine: 'claude-code', workDir: 'w' });
    return r.status === 201 ? r.body.data : undefined;
  });
  await api('POST', '/api/v1/sessions', { agentId: agent.id, content: 'flood' });
  const start: any = await host.next((f) => f.t === 'run.start');
  await new Promise((r) => setTimeout(r, 500));
  const before = mem();
  const text = 'x'.repeat(CHUNK);
  const frames = Math.ceil((MB * 1024 * 1024) / CHUNK);
  const t0 = Date.now();
  let sent = 0;
  for (; sent < frames && host.ws.readyState === host.ws.OPEN; sent++) {
    host.send({ t: 'run.delta', runId: start.runId, text });
    while (host.ws.bufferedAmount > 8 * CHUNK) await new Promise((r) => setTimeout(r, 1));
  }
  const open = host.ws.readyState === host.ws.OPEN;
  if (open) await host.ping(); // every frame read by the hub
  const secs = (Date.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 1000));
  const peakRss = mem();
  const heap = await new Promise<{ heap: number; external: number }>((r) => {
    child.on('message', (m: any) => m.t === 'gc-done' && r(m));
    child.send({ t: 'gc' });
  });
  await new Promise((r) => setTimeout(r, 500));
  const after = mem();
  const aborted = host.frames.some((f: any) => f.t === 'run.abort' && f.runId === start.runId);
  const line = `| ${ROOT === resolve(import.meta.dirname, '..') ? 'this branch' : ROOT} | ${((sent * CHUNK) / 2 ** 20).toFixed(0)} MB in ${sent} frames, ${secs.toFixed(1)} s | ${before.rss.toFixed(0)} | ${peakRss.rss.toFixed(0)} | ${after.rss.toFixed(0)} | ${after.peak.toFixed(0)} | ${heap.heap.toFixed(0)} / ${heap.external.toFixed(0)} | ${aborted ? 'run aborted (OUTPUT_TOO_LARGE)' : 'run still streaming'}${open ? '' : ', channel closed'} |`;
  console.log(line);
  host.close();
  child.kill('SIGKILL'); // the old code would write the whole partial text on a clean end
  process.exit(0);
}
