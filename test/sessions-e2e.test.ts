// End to end: a real hub, the real agent-host CLI process and the fake
// claude executable (test/fixtures/fake-claude.mjs). Covers the first answer,
// SSE order, --resume, both queue reasons starting by themselves, abort
// killing the engine process, a hub restart losing no queued message, and a
// host killed mid-run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { startTestHub, createTestDatabase, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, pidAlive, fakeEngineRuns, agentWhenReady, type AgentHostProcess } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { apiError } from './helpers/api-error.js';
import { followSession, type SessionStreamEvent } from '../src/client/sse.js';
import type { AcceptedRun } from '../src/client/index.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sessions-e2e-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');
const S = '/api/v1/sessions';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let overrides: Record<string, unknown>;
let t: TestHub;
let host: AgentHostProcess;
let user: { id: string; key: string };
let agentId: string;
// The agent-host reaches the hub through this proxy, so a restarted hub (on a new port:
// the old one lingers in TIME_WAIT) is found at the same address.
let target = 0;
const proxy = net.createServer((c) => {
  const u = net.connect(target, '127.0.0.1');
  const kill = () => {
    c.destroy();
    u.destroy();
  };
  c.pipe(u).on('error', kill);
  u.pipe(c).on('error', kill);
  c.on('close', kill).on('error', kill);
  u.on('close', kill).on('error', kill);
});

const claudeRuns = () => fakeEngineRuns(logFile);
const runOf = (prompt: string) => eventually(async () => claudeRuns().find((r) => r.prompt === prompt), 10_000, 25);
const alive = pidAlive;
// The hub is rebuilt mid-file (restart test): a client of the current one.
const client = () => t.client(user.key);
const get = (id: string) => client().sessions.get(id);
const waitStatus = (id: string, status: string, ms = 15_000) => eventually(async () => ((await get(id)).status === status ? get(id) : undefined), ms, 25);
const history = async (id: string) => (await client().sessions.messages(id, { limit: 50 })).items as any[];
const send = (id: string, content: string) => client().sessions.send(id, { content });
const open = (content: string) => client().sessions.create({ agentId, content }) as Promise<AcceptedRun>;

before(async () => {
  db = await createTestDatabase();
  // The real agent-host answers an abort with run.end once the engine is gone: the production grace holds.
  overrides = { ...(db.url ? { databaseUrl: db.url } : { dataDir: join(dir, 'data') }), engineStopGraceMs: 10_000 };
  t = await startTestHub(overrides);
  target = t.hub.port;
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const hubUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  user = await t.user();
  const pk = await client().hosts.pairKey();
  host = spawnAgentHost(['run', '--hub', hubUrl, '--pair-key', pk.pairKey, '--work-root', workRoot, '--capacity', '1', '--name', 'e2e'], {
    AGENT_HOST_HOME: join(dir, 'home'), CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile,
  });
  const line = await host.waitFor(/connected to \S+ as (\S+)/);
  const hostId = line.match(/as (\S+)/)![1];
  const a = await agentWhenReady(client(), { name: 'e2e', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000);
  agentId = a.id;
});

after(async () => {
  host?.kill('SIGKILL');
  for (const r of claudeRuns()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL');
  await t?.close();
  await db?.drop();
  proxy.close();
});

let first: string;

test('first message: SSE frames in order, the answer persisted and readable, engine run as specified', async () => {
  // Raw stream: the frames on the wire of a session's creation (the client streams messages to existing sessions only).
  const sse = await openSse(t.url + S, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId, content: 'hello [tools] [deltas:4]' }),
  });
  assert.equal(sse.status, 200, sse.text);
  await sse.ended;
  const names = sse.frames.map((f) => f.event);
  assert.deepEqual(names, ['accepted', 'snapshot', 'tool.started', 'tool.completed', 'message.delta', 'message.delta', 'message.delta', 'message.delta', 'run.completed']);
  assert.equal(sse.frames.filter((f) => f.event === 'message.delta').map((f) => f.data.delta).join(''), 'echo: hello [tools] [deltas:4]');
  first = sse.frames[0].data.sessionId;
  for (const f of sse.frames) {
    assert.equal(f.data.sessionId, first);
    assert.ok(f.id && f.data.status);
  }
  const h = await history(first);
  assert.deepEqual(h.map((m) => [m.role, m.kind]), [['user', 'text'], ['assistant', 'tool_use'], ['user', 'tool_result'], ['assistant', 'text']]);
  assert.equal(h[3].content, 'echo: hello [tools] [deltas:4]');
  assert.equal(h[1].seq, h[2].seq);
  const run = await runOf('hello [tools] [deltas:4]');
  assert.equal(run.cwd, join(workRoot, 'proj'));
  assert.deepEqual(run.argv, ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--permission-mode=default']);
  assert.equal((await get(first)).model, 'claude-fake-1');
});

test('second turn passes --resume with the engine session of the first; cost follows the formula', async () => {
  await send(first, 'again'); // the 202
  await waitStatus(first, 'active');
  await eventually(async () => (await history(first)).length === 6);
  const argv = (await runOf('again')).argv;
  const resume = argv.find((a) => a.startsWith('--resume='));
  assert.match(resume ?? '', /^--resume=[0-9a-f-]{36}$/, argv.join(' '));
  // The fake reports prompt and answer lengths as usage.
  const input = 'hello [tools] [deltas:4]'.length + 'again'.length;
  const output = 'echo: hello [tools] [deltas:4]'.length + 'echo: again'.length;
  const c = await client().sessions.cost(first);
  assert.deepEqual(c, { model: 'claude-fake-1', messageCount: 6, inputTokens: input, outputTokens: output, totalTokens: input + output, cost: input + output * 2 });
});

test('session_busy and host_capacity: queued messages start by themselves, in order', async () => {
  const a = await open('slow [sleep:1200]');
  assert.equal(a.status, 'processing');
  const busy = await send(a.sessionId, 'after slow');
  assert.equal(busy.status, 'queued');
  assert.equal(busy.queueReason, 'session_busy');
  const b = await open('other session');
  assert.equal(b.status, 'queued');
  assert.equal(b.queueReason, 'host_capacity');
  await waitStatus(a.sessionId, 'active');
  await waitStatus(b.sessionId, 'active');
  const ha = await history(a.sessionId);
  assert.equal(ha.at(-1).content, 'echo: after slow', JSON.stringify(ha.map((m) => [m.role, m.content, m.runId])) + JSON.stringify(await get(a.sessionId)));
  assert.equal((await history(b.sessionId)).at(-1).content, 'echo: other session');
  const order = claudeRuns().map((r) => r.prompt);
  assert.ok(order.indexOf('after slow') < order.indexOf('other session'), 'the older waiting task ran first');
});

test('abort: the engine process is gone, waiting messages discarded, partial output kept as interrupted', async () => {
  const a = await open('forever [sleep:60000]');
  await send(a.sessionId, 'never 1');
  await send(a.sessionId, 'never 2');
  const run = await runOf('forever [sleep:60000]');
  assert.ok(alive(run.pid));
  // Abort once the engine's first words reached the hub.
  let sawDelta!: () => void;
  const delta = new Promise<void>((res) => (sawDelta = res));
  const events: SessionStreamEvent[] = [];
  const live = followSession({ baseUrl: t.url, token: user.key, sessionId: a.sessionId, onEvent: (e) => (events.push(e), e.event === 'message.delta' && sawDelta()) });
  await delta;
  const r = await client().sessions.abort(a.sessionId);
  const end = await live.done;
  assert.equal(end.reason, 'error');
  assert.deepEqual([events.at(-1)!.event, (events.at(-1)!.data as any).code], ['run.error', 'ABORTED']);
  assert.deepEqual(r, { sessionId: a.sessionId, status: 'aborted' });
  await eventually(async () => !alive(run.pid), 10_000, 25);
  const s = await get(a.sessionId);
  assert.equal(s.status, 'active');
  assert.equal(s.pendingRuns, 0);
  const h = await eventually(async () => {
    const x = await history(a.sessionId);
    return x.some((m) => m.interrupted) ? x : undefined;
  });
  assert.deepEqual(h.map((m) => m.role), ['user', 'assistant']);
  assert.equal(h[1].interrupted, true);
  assert.match(h[1].content, /^echo: /);
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(claudeRuns().filter((x) => x.prompt.startsWith('never')).length, 0, 'discarded messages never ran');
});

test('hub restart with a running turn and queued messages loses none', async () => {
  const a = await open('survives [sleep:1500]');
  await send(a.sessionId, 'queued 1');
  await send(a.sessionId, 'queued 2');
  await runOf('survives [sleep:1500]');
  await t.close();
  t = await startTestHub(overrides);
  target = t.hub.port;
  await host.waitFor(/connected to [\s\S]*connected to/, 20_000);
  await eventually(async () => {
    const h = await history(a.sessionId);
    return h.filter((m) => m.role === 'assistant').length === 3 ? h : undefined;
  }, 30_000, 100);
  const h = await history(a.sessionId);
  assert.deepEqual(h.filter((m) => m.role === 'assistant').map((m) => m.content), ['echo: survives [sleep:1500]', 'echo: queued 1', 'echo: queued 2']);
  await waitStatus(a.sessionId, 'active'); // the answer's rows may be flushed just before the turn's end
});

test('a host killed mid-run ends the turn with run.error; the session stays usable', async () => {
  // Raw stream: a session's creation streamed (the client streams messages to existing sessions only).
  const sse = await openSse(t.url + S, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agentId, content: 'doomed [sleep:60000]' }),
  });
  assert.equal(sse.status, 200);
  await runOf('doomed [sleep:60000]');
  host.kill('SIGKILL');
  await sse.ended;
  const last = sse.frames.at(-1)!;
  assert.equal(last.event, 'run.error');
  assert.equal(last.data.code, 'HOST_DISCONNECTED');
  const sid = sse.frames[0].data.sessionId;
  assert.equal((await get(sid)).status, 'active');
  await assert.rejects(send(sid, 'host is gone'), apiError(503));
});
