// The logs tell the story and keep the secrets: a real hub at LOG_LEVEL=debug, the real agent-host
// CLI and the fake claude run a full turn (with a model configuration applied, keys made, a login
// and a refresh). Every line the hub and the host CLI wrote is then searched for every secret
// involved, and the access, host and run lines are checked field by field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, connectFakeHost, eventually, agentWhenReady, type AgentHostProcess } from './helpers/host.js';
import { CloseCodes } from '../host-protocol/version.js';
import { startFakeOidc, type FakeOidc } from './helpers/fake-oidc.js';
import { createLogger, scrubSecrets } from '../src/log.js';
import type { AcceptedRun, Client } from '../src/client/index.js';

const FAKE_CLAUDE = resolve(import.meta.dirname, 'fixtures/fake-claude.mjs');
const MODEL_KEY = 'sk-modelkey-logs-7f3a9c2e1b';

let t: TestHub;
let idp: FakeOidc;
let host: AgentHostProcess;
let tmp: string;
const lines: string[] = [];
const secrets = new Map<string, string>(); // what → value
let user: { id: string; key: string };
let c: Client;
let hostId: string;
let credential: string;

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
const find = (msg: string, pred: (l: Record<string, any>) => boolean = () => true) => parsed().filter((l) => l.msg === msg && pred(l));

before(async () => {
  idp = await startFakeOidc();
  const log = createLogger('debug', { node: 'logs-test' }, (line) => void lines.push(line));
  t = await startTestHub({ logLevel: 'debug' }, idp.env, { log });
  secrets.set('admin key', t.adminKey);
  if (t.config.secretKey) secrets.set('SECRET_KEY', t.config.secretKey);
  secrets.set('OIDC client secret', idp.env.OIDC_CLIENT_SECRET);
  user = await t.user('logs-user');
  c = t.client(user.key);
  secrets.set('user API key', user.key);

  tmp = mkdtempSync(join(tmpdir(), 'logs-'));
  const claudeDir = join(tmp, 'claude-config');
  const workRoot = join(tmp, 'work');
  mkdirSync(join(workRoot, 'proj'), { recursive: true });
  mkdirSync(claudeDir);
  writeFileSync(join(claudeDir, 'settings.json'), '{}\n');
  const { pairKey } = await c.hosts.pairKey();
  secrets.set('pair key', pairKey);
  const home = join(tmp, 'home');
  host = spawnAgentHost(['run', '--hub', t.url, '--pair-key', pairKey, '--work-root', workRoot, '--capacity', '1', '--name', 'logs', '--verbose'], {
    AGENT_HOST_HOME: home, CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: claudeDir,
  });
  hostId = (await host.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  // The credential the CLI stored: every string value in its file that looks like a token.
  const cred = JSON.parse(readFileSync(join(home, 'credential.json'), 'utf8'));
  credential = cred.credential;
  for (const [k, v] of Object.entries(cred)) if (typeof v === 'string' && v.length >= 20 && !/^https?:/.test(v) && v !== hostId) secrets.set(`host credential (${k})`, v);
  assert.ok([...secrets.keys()].some((k) => k.startsWith('host credential')), JSON.stringify(Object.keys(cred)));
});

after(async () => {
  if (process.env.LOGS_DUMP) writeFileSync(process.env.LOGS_DUMP, lines.join('\n') + '\n---host---\n' + host?.output());
  host?.kill('SIGKILL');
  await t?.close();
  await idp?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a full turn with keys, a model configuration and a login: the lines tell it, no secret is in them', async () => {
  // A second API key, used once (and once with the key in the query string, which the log must not echo).
  const key2 = (await c.keys.create('second')).key;
  assert.equal(typeof key2, 'string');
  secrets.set('second API key', key2);
  // Raw: the key in the query string, which the client never sends.
  assert.equal((await t.api('GET', `/api/v1/me?token=${encodeURIComponent(key2)}&api_key=${encodeURIComponent(key2)}`, { token: key2 })).status, 200);

  // Login and refresh: the access JWTs and refresh tokens.
  const anonymous = t.client();
  const s = await anonymous.auth.login();
  const code = idp.authorize(s.url, { sub: 'logs-1', name: 'Logs' });
  secrets.set('OIDC code', code);
  const cb = await anonymous.auth.callback(code, s.state);
  secrets.set('access JWT', cb.accessToken);
  secrets.set('refresh token', cb.refreshToken);
  const rf = await anonymous.auth.refresh(cb.refreshToken);
  secrets.set('refreshed JWT', rf.accessToken);
  secrets.set('refreshed refresh token', rf.refreshToken);
  assert.match((await t.client(rf.accessToken).me()).id, /\S/);

  // A model configuration with an API key, applied to the host (the CLI writes it to settings.json).
  const mc = await c.modelConfigs.create({ name: 'L', apiType: 'anthropic', baseUrl: 'https://l.example', apiKey: MODEL_KEY, modelName: 'model-l' });
  secrets.set('model endpoint API key', MODEL_KEY);
  await c.hosts.applyModelConfig(hostId, mc.id);

  // An agent on the host and a turn that completes, then one whose engine fails.
  const ag = await agentWhenReady(c, { name: 'logs', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' }, 10_000);
  const agentId = ag.id;
  const opened = (await c.sessions.create({ agentId, content: 'hello logs' })) as AcceptedRun;
  assert.ok(['processing', 'queued'].includes(opened.status), JSON.stringify(opened));
  const sessionId = opened.sessionId;
  const status = async () => (await c.sessions.get(sessionId)).status;
  await eventually(async () => (await status()) === 'active', 15_000, 50);
  assert.equal((await c.sessions.send(sessionId, { content: 'break [exit:3] [stderr-key]' })).sessionId, sessionId);
  await eventually(async () => find('run failed: engine error').length > 0 || undefined, 15_000, 50);

  // Another channel with the same credential takes the host over; then it leaves. Each is a line with its close code.
  const other = await connectFakeHost(t, credential, { name: 'logs' });
  await eventually(async () => find('host taken over', (l) => l.hostId === hostId).length > 0 || undefined, 15_000, 50);
  host.kill('SIGKILL');
  other.close();
  await eventually(async () => find('host disconnected', (l) => l.hostId === hostId).length > 0 || undefined, 15_000, 50);

  // No secret anywhere: not in the hub's lines, not in what the host CLI printed.
  const all = lines.join('\n') + '\n' + host.output();
  for (const [what, value] of secrets) {
    assert.ok(value && value.length >= 8, `${what} is a real value`);
    assert.ok(!all.includes(value), `the ${what} appears in the logs`);
  }
  assert.ok(!/authorization/i.test(lines.join('\n')), 'no Authorization header in the hub lines');

  // Startup phases.
  assert.equal(find('migrations applied').length, 1);
  assert.equal(find('hub listening').length, 1);

  // Access lines: the route template, never the raw URL or query; the principal; status and ms.
  const me = find('request', (l) => l.route === '/api/v1/me' && l.method === 'GET');
  assert.ok(me.length >= 2, JSON.stringify(me));
  for (const l of me) {
    assert.equal(l.level, 'debug');
    assert.equal(l.status, 200);
    assert.equal(l.principal, l.principal && String(l.principal));
    assert.equal(typeof l.ms, 'number');
  }
  assert.ok(me.some((l) => l.principal === user.id), 'the API key caller is named by id');
  const sessionGet = find('request', (l) => l.method === 'GET' && l.route === '/api/v1/sessions/:id');
  assert.ok(sessionGet.length > 0 && sessionGet.every((l) => l.principal === user.id && l.status === 200), JSON.stringify(sessionGet.slice(0, 2)));
  assert.ok(!lines.some((l) => l.includes(sessionId) && JSON.parse(l).msg === 'request'), 'access lines hold the template, not the session id of the URL');
  const anon = find('request', (l) => l.route === '/api/v1/auth/refresh');
  assert.ok(anon.length === 1 && anon[0].principal === null && anon[0].status === 200);

  // Host connected (info, with its id and name), run started / ended / failed.
  const conn = find('host connected', (l) => l.hostId === hostId);
  assert.equal(conn.length, 2, 'the CLI, then the channel that took over');
  assert.equal(conn[0].level, 'info');
  assert.equal(conn[0].name, 'logs');
  assert.equal(conn[0].userId, user.id);
  const taken = find('host taken over', (l) => l.hostId === hostId);
  assert.equal(taken.length, 1);
  assert.equal(taken[0].level, 'info');
  assert.equal(taken[0].code, CloseCodes.REPLACED.code);
  const gone = find('host disconnected', (l) => l.hostId === hostId)[0];
  assert.equal(gone.level, 'info');
  assert.equal(typeof gone.code, 'number');

  const started = find('run started', (l) => l.sessionId === sessionId);
  assert.equal(started.length, 2, JSON.stringify(started));
  for (const l of started) {
    assert.equal(l.level, 'info');
    assert.equal(l.hostId, hostId);
    assert.equal(l.agentId, agentId);
    assert.equal(l.engine, 'claude-code');
    assert.match(l.runId, /\S/);
  }
  const ended = find('run ended', (l) => l.sessionId === sessionId);
  assert.equal(ended.length, 1, JSON.stringify(ended));
  assert.equal(ended[0].level, 'info');
  assert.equal(ended[0].runId, started[0].runId);
  assert.equal(ended[0].outcome, 'completed');
  assert.equal(typeof ended[0].ms, 'number');
  assert.ok(ended[0].outputTokens > 0);
  const failed = find('run failed: engine error', (l) => l.sessionId === sessionId);
  assert.equal(failed.length, 1, JSON.stringify(failed));
  assert.equal(failed[0].level, 'warn');
  assert.equal(failed[0].runId, started[1].runId);
  assert.equal(failed[0].outcome, 'failed');
  assert.equal(typeof failed[0].ms, 'number');
  assert.match(failed[0].message, /failing on purpose/, 'the engine message is in the line');
  assert.match(failed[0].message, /401 invalid key \[redacted\]/, 'the key the engine echoed is not');

  // One JSON object per line, every one.
  for (const l of parsed()) assert.ok(l.t && l.level && l.msg);
});

test('scrubSecrets: credentials in relayed text are replaced, ordinary words and paths are kept', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
  const text = `engine exited with code 1: /home/me/projects/agent-hub/src/main.ts: 401 for sk-ab12cd34ef ahk_0123456789abcdef0123 Bearer xyz ${jwt} anthropic-messages-unavailable`;
  const out = scrubSecrets(text);
  for (const s of ['sk-ab12cd34ef', 'ahk_0123456789abcdef0123', 'Bearer xyz', jwt]) assert.ok(!out.includes(s), s);
  assert.ok(out.startsWith('engine exited with code 1: /home/me/projects/agent-hub/src/main.ts: 401 for [redacted]'), out);
  assert.ok(out.endsWith('anthropic-messages-unavailable'), out);
});
