// Issue 14, part 4: the host CLI people can watch. A real hub, the real agent-host
// process and the fake claude: the connect lines, run start/end lines without the
// prompt, `agent-host status` while running and after exit, the real network error
// for an unreachable hub, and Ctrl-C ending a running turn as `aborted` on the hub
// with its partial output kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, agentWhenReady, type AgentHostProcess } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import { savePairing } from '../src/host-cli/home.js';
import type { AcceptedRun, Client } from '../src/client/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'host-watch-'));
const workRoot = join(dir, 'work');
mkdirSync(join(workRoot, 'proj'), { recursive: true });
const home = join(dir, 'home');
const logFile = join(dir, 'claude.log');
const S = '/api/v1/sessions';
const claudeDir = join(dir, 'claude-config');
mkdirSync(claudeDir, { recursive: true });

let t: TestHub;
let host: AgentHostProcess;
let user: { id: string; key: string };
let c: Client;
let agentId: string;
let hostId: string;

/** `agent-host status` as a user would run it. */
const status = (agentHome = home) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/host-cli/main.ts'), 'status'], { cwd: ROOT, env: { ...process.env, AGENT_HOST_HOME: agentHome }, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: r.stdout + r.stderr };
};
const claudePids = (): number[] => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).pid) : []);
const open = async (content: string) => {
  const r = (await c.sessions.create({ agentId, content })) as AcceptedRun;
  assert.ok(['processing', 'queued'].includes(r.status), JSON.stringify(r));
  return r;
};

before(async () => {
  t = await startTestHub();
  user = await t.user();
  c = t.client(user.key);
  const pk = await c.hosts.pairKey();
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pk.pairKey, '--work-root', workRoot, '--name', 'watched'], {
    AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: logFile, CLAUDE_CONFIG_DIR: claudeDir,
  });
  hostId = (await host.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  agentId = (await agentWhenReady(c, { name: 'watched', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000)).id;
});

after(async () => {
  host?.kill('SIGKILL');
  for (const pid of claudePids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await t?.close();
});

test('"connecting to <hub> …" is printed before "connected to <hub> as <host id>"', () => {
  const out = host.output();
  const connecting = out.indexOf(`agent-host: connecting to ${t.url} …`);
  const connected = out.indexOf(`agent-host: connected to ${t.url} as ${hostId}`);
  assert.ok(connecting >= 0 && connected > connecting, out);
});

test('a run prints its start and its end (session, duration, outcome), never the prompt', async () => {
  const secret = 'the-prompt-is-private-7f3a';
  const a = await open(secret);
  const started = await host.waitFor(new RegExp(`run \\S+ started \\(session ${a.sessionId}, claude-code, proj\\)`));
  const runId = started.match(/run (\S+) started/)![1];
  await host.waitFor(new RegExp(`run ${runId} completed \\(session ${a.sessionId}, \\d+\\.\\ds\\)`));
  // The host prints its line as it sends run.end; the hub writes the end after. The next test applies
  // settings, which a host with a running task refuses (HOST_BUSY): wait for the hub's side too.
  await eventually(async () => (await c.sessions.get(a.sessionId)).status === 'active');
  assert.ok(!host.output().includes(secret), 'the prompt text is not printed without --verbose');
  assert.ok(!host.output().includes('echo:'), 'nor the answer');
});

test('settings applied and reverted: one line each, never the values', async () => {
  const apiKey = 'sk-watch-000011112222';
  const mc = await c.modelConfigs.create({ name: 'W', apiType: 'anthropic', baseUrl: 'https://w.example', apiKey, modelName: 'model-w' });
  await c.hosts.applyModelConfig(hostId, mc.id);
  await host.waitFor(/settings for claude-code applied/);
  await c.hosts.applyModelConfig(hostId, null);
  await host.waitFor(/settings for claude-code reverted to the default/);
  assert.ok(!host.output().includes(apiKey) && !host.output().includes('w.example'), 'no setting is printed');
});

test('`agent-host status` while running: pairing, connected, the run in progress; never the credential', async () => {
  const file = join(home, 'status.json');
  const a = await open('slow [sleep:60000]');
  await host.waitFor(new RegExp(`started \\(session ${a.sessionId}`));
  assert.equal(statSync(file).mode & 0o777, 0o600, 'the status file is private');
  const s = status();
  assert.equal(s.code, 0, s.out);
  assert.ok(s.out.includes(`paired with ${t.url} as ${hostId} (watched)`), s.out);
  assert.ok(s.out.includes(`credential: ${join(home, 'credential.json')}`), s.out);
  assert.match(s.out, new RegExp(`run: running \\(pid ${host.proc.pid}\\), connected to ${t.url.replace(/[.]/g, '\\.')} since `));
  assert.match(s.out, /runs in progress: 1\n/);
  assert.ok(s.out.includes(`(session ${a.sessionId}, for `), s.out);
  const credential = JSON.parse(readFileSync(join(home, 'credential.json'), 'utf8')).credential as string;
  assert.ok(!s.out.includes(credential) && !readFileSync(file, 'utf8').includes(credential), 'the credential is never shown');
  assert.ok(!readFileSync(file, 'utf8').includes('slow [sleep'), 'nor the prompt');
});

test('Ctrl-C during a run: the turn ends `aborted` on the hub with its partial text kept, exit 0; status then says not running', async () => {
  // The run of the previous test is still going; wait until its first words reached the hub.
  const sessionId = [...host.output().matchAll(/started \(session (\S+),/g)].at(-1)![1];
  const live = await openSse(`${t.url}${S}/${sessionId}/events`, { headers: { authorization: `Bearer ${user.key}` } });
  await live.until((f) => f.event === 'message.delta');
  host.kill('SIGINT');
  await host.waitFor(/stopping: waiting for 1 run to end — press Ctrl-C again to force/);
  const code = await host.wait();
  assert.equal(code, 0, host.output());
  assert.match(host.output(), /run \S+ aborted \(session \S+, \d+\.\ds\)/);
  await live.ended;
  const last = live.frames.at(-1)!;
  assert.equal(last.event, 'run.error');
  assert.deepEqual([last.data.status, last.data.code], ['aborted', 'ABORTED'], 'readers learn the run was aborted, not that the engine failed or the host was lost');
  const task = await eventually(async () => {
    const rows = await t.hub.ctx.em().execute(`select status, ended_at from session_tasks where session_id = ?`, [sessionId]);
    return rows[0]?.ended_at ? rows[0] : undefined;
  });
  assert.equal(task.status, 'aborted', 'the turn reads aborted, not lost to HOST_DISCONNECTED');
  const h = (await c.sessions.messages(sessionId, { limit: 50 })).items;
  assert.deepEqual(h.map((m) => m.role), ['user', 'assistant']);
  assert.equal(h[1].interrupted, true);
  assert.match(String(h[1].content), /^echo: /, 'the partial output is kept');

  const s = status();
  assert.equal(s.code, 0, s.out);
  assert.match(s.out, /run: not running/);
  assert.ok(!existsSync(join(home, 'status.json')), 'the status file goes with the process');
});

test('an unreachable hub: the real network error (ECONNREFUSED and the address), status says not connected; Ctrl-C exits 0', async () => {
  const port = await new Promise<number>((res) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => res(p));
    });
  });
  const hub = `http://127.0.0.1:${port}`;
  const other = join(dir, 'home-unreachable');
  savePairing({ hub, hostId: 'hst_unreachable', credential: 'ahh_unreachable', name: 'lonely' }, { AGENT_HOST_HOME: other });
  const p = spawnAgentHost(['run', '--work-root', workRoot], { AGENT_HOST_HOME: other, CLAUDE_BIN: FAKE });
  try {
    await p.waitFor(new RegExp(`connecting to ${hub.replace(/[.]/g, '\\.')} …`));
    await p.waitFor(new RegExp(`could not connect to \\S+ \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\); reconnecting in \\d+\\.\\ds`));
    const s = await eventually(async () => {
      const r = status(other);
      return r.out.includes('ECONNREFUSED') ? r : undefined;
    });
    assert.match(s.out, new RegExp(`run: running \\(pid ${p.proc.pid}\\), not connected to \\S+ since \\S+ \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)`));
    assert.match(s.out, /runs in progress: 0/);
    p.kill('SIGINT');
    assert.equal(await p.wait(), 0);
  } finally {
    p.kill('SIGKILL');
  }
});

test('--help lists status', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/host-cli/main.ts'), '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.match(r.stdout, /agent-host status\s+the pairing/);
});
