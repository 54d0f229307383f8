// Issue 10, hole 3: no flag injection into the engine. The engine session id
// a host reports is validated on the hub before it is stored (and again before
// it is sent), and on the host before it reaches argv; every argv value is
// whitelisted and passed as `--flag=value`, so none can start a new option.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRun, claudeArgs, type RunStartFrame } from '../src/host-cli/runner.js';
import { savePairing } from '../src/host-cli/home.js';
import { isEngineSessionId } from '../host-protocol/engine-values.js';
import type { HostToHub } from '../host-protocol/frames.js';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, spawnAgentHost, eventually, agentWhenReady, type AgentHostProcess, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sec-engine-args-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const logFile = join(dir, 'claude.log');
process.env.FAKE_CLAUDE_LOG = logFile;
const claudeRuns = (): Array<{ pid: number; argv: string[]; prompt: string }> =>
  existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

const HOSTILE = '--dangerously-skip-permissions';
const UUID = '0b0f5f3e-2a4b-4c7d-9e1f-123456789abc';
const frame = (over: Partial<RunStartFrame> = {}): RunStartFrame => ({
  t: 'run.start', runId: 'run_x', sessionId: 'ses_x', engine: 'claude-code', prompt: 'hi', workDir: 'proj', mode: 'default', ...over,
});

// ---------- the host: claudeArgs and startRun ----------

test('engine session ids: only UUIDs pass', () => {
  assert.equal(isEngineSessionId(UUID), true);
  assert.equal(isEngineSessionId(UUID.toUpperCase()), true);
  for (const bad of [HOSTILE, '-x', '', 'fake-session', `${UUID} --x`, `${UUID}\n`, '__proto__', 'x'.repeat(200), 42, null, undefined]) {
    assert.equal(isEngineSessionId(bad), false, String(bad));
  }
});

test('claudeArgs: --resume=<uuid>, --permission-mode=<whitelisted>, no value starts with "-"', () => {
  const a = claudeArgs(frame({ resume: UUID, mode: 'auto' }));
  assert.deepEqual(a.slice(5), [`--resume=${UUID}`, '--permission-mode=bypassPermissions']);
  // Always explicit: with no flag the engine would start in the owner's settings `permissions.defaultMode`.
  assert.deepEqual(claudeArgs(frame({ mode: 'default' })).slice(5), ['--permission-mode=default']);
  assert.deepEqual(claudeArgs(frame({ mode: 'plan' })).slice(5), ['--permission-mode=plan']);
  assert.deepEqual(claudeArgs(frame({ mode: 'accept-edits' })).slice(5), ['--permission-mode=acceptEdits']);
  // Every element is either a fixed flag or `--flag=value`: nothing the hub sends is a separate argv element.
  for (const x of a) assert.ok(x === '-p' || x.startsWith('--') || x === 'stream-json', x);
});

test('every mode the hub sends becomes an explicit --permission-mode, so the owner\'s settings defaultMode never applies to a guest', () => {
  for (const mode of ['default', 'accept-edits', 'auto', 'plan']) {
    assert.equal(claudeArgs(frame({ mode })).filter((a) => a.startsWith('--permission-mode=')).length, 1, mode);
  }
});

test('claudeArgs refuses a hostile resume, mode or effort instead of passing it on', () => {
  for (const over of [
    { resume: HOSTILE }, { resume: 'fake-session' }, { resume: '' }, { resume: `${UUID} --x` },
    { mode: HOSTILE }, { mode: '__proto__' }, { mode: 'constructor' }, { mode: 'toString' }, { mode: 'bypassPermissions' },
    { effort: '__proto__' }, { effort: HOSTILE }, { effort: 'max' },
  ] as Array<Partial<RunStartFrame>>) {
    assert.throws(() => claudeArgs(frame(over)), /not allowed|not an engine session id/, JSON.stringify(over));
  }
});

test('startRun with a hostile value: one run.end with BAD_RUN, the engine is never started', async () => {
  for (const over of [{ resume: HOSTILE }, { mode: '__proto__' }, { effort: 'constructor' }] as Array<Partial<RunStartFrame>>) {
    const before = claudeRuns().length;
    const frames: HostToHub[] = [];
    const h = startRun(frame({ ...over, runId: 'run_bad' }), { workRoot, claudeBin: FAKE }, (f) => frames.push(f));
    await h.done;
    assert.equal(frames.length, 1, JSON.stringify(frames));
    const end = frames[0] as Extract<HostToHub, { t: 'run.end' }>;
    assert.equal(end.t, 'run.end');
    assert.equal(end.ok, false);
    assert.equal(end.error?.code, 'BAD_RUN');
    assert.equal(claudeRuns().length, before, 'the engine must not start');
  }
});

// ---------- the hub: a hostile host's engineSessionId is never stored nor sent back ----------

let t: TestHub;
let agentHost: AgentHostProcess | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  agentHost?.kill('SIGKILL');
  await t?.close();
});

test('a hostile host reports engineSessionId "--dangerously-skip-permissions": the next turn\'s argv does not carry it', async () => {
  const user = await t.user();
  const { hostId, credential } = await pairHost(t, user.key, 'hostile');
  const fake: FakeHost = await connectFakeHost(t, credential, { capacity: 1 });
  const c = t.client(user.key);
  const { id: agentId } = await agentWhenReady(c, { name: 'inj', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000);
  /** A message that started or queued a run: the plain 202. */
  const started = async (p: Promise<SessionView | AcceptedRun>) => {
    const r = (await p) as AcceptedRun;
    assert.ok(r.sessionId && r.taskId, 'a 202 with the run');
    return r;
  };
  const active = () => eventually(async () => (await c.sessions.get(sid)).status === 'active', 10_000, 25);

  // Turn 1 runs on the hostile host, which reports a flag as its engine session id.
  const sid = (await started(c.sessions.create({ agentId, content: 'turn one' }))).sessionId;
  const start1: any = await fake.next((f) => f.t === 'run.start');
  fake.send({ t: 'run.init', runId: start1.runId, engineSessionId: HOSTILE, model: 'm' });
  fake.send({ t: 'run.end', runId: start1.runId, ok: true, engineSessionId: HOSTILE, usage: { inputTokens: 1, outputTokens: 1 } });
  await active();
  const stored = await t.hub.ctx.em().getConnection().execute(`select engine_session_id from sessions where id = ?`, [sid]);
  assert.equal(stored[0].engine_session_id, null, 'the hostile id must not be stored');

  // Turn 2 on the same hostile channel: run.start carries no resume.
  await started(c.sessions.send(sid, { content: 'turn two' }));
  const start2: any = await fake.next((f) => f.t === 'run.start' && (f as any).runId !== start1.runId);
  assert.equal(start2.resume, undefined);
  fake.send({ t: 'run.end', runId: start2.runId, ok: true, engineSessionId: `${UUID}\u0000` });
  await active();

  // A value stored before this check existed (or by any other path) is dropped at dispatch too.
  await t.hub.ctx.em().getConnection().execute(`update sessions set engine_session_id = ? where id = ?`, [HOSTILE, sid]);

  // Turn 3 on the real agent-host with the same credential: the engine's argv.
  fake.close();
  await fake.closed;
  const home = join(dir, 'home');
  savePairing({ hub: t.url, hostId, credential, name: 'hostile' }, { AGENT_HOST_HOME: home });
  agentHost = spawnAgentHost(['run', '--work-root', workRoot, '--capacity', '1'], { AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile });
  await agentHost.waitFor(/connected to /);
  await eventually(() => started(c.sessions.send(sid, { content: 'turn three' })));
  const run = await eventually(async () => claudeRuns().find((x) => x.prompt === 'turn three'), 15_000, 25);
  assert.ok(!run.argv.some((x) => x.includes('dangerously')), run.argv.join(' '));
  assert.ok(!run.argv.some((x) => x.startsWith('--resume')), run.argv.join(' '));
  await active();

  // Turn 4: the engine's own UUID from turn 3 is kept and passed as --resume=<uuid>.
  await started(c.sessions.send(sid, { content: 'turn four' }));
  const run4 = await eventually(async () => claudeRuns().find((x) => x.prompt === 'turn four'), 15_000, 25);
  const resume = run4.argv.find((x) => x.startsWith('--resume'));
  assert.ok(resume && /^--resume=[0-9a-f-]{36}$/.test(resume), run4.argv.join(' '));
});
