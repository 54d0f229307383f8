// End to end with the real agent-host CLI and a fake `claude`: the settings
// file on the host follows apply, re-sync and revert; busy, offline and bound
// conditions answer 409.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, statSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, eventually, type AgentHostProcess } from './helpers/host.js';
import { BACKUP_FILE } from '../src/host-cli/settings.js';

const FAKE_CLAUDE = resolve(import.meta.dirname, 'fixtures/fake-claude.mjs');
const ORIGINAL =
  JSON.stringify(
    {
      model: 'sonnet',
      env: { HTTP_PROXY: 'http://proxy.local:3128', ANTHROPIC_API_KEY: 'users-own-key', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-haiku-own' },
      permissions: { allow: ['Read'], deny: ['Bash(rm:*)'] },
      includeCoAuthoredBy: false,
    },
    null,
    2,
  ) + '\n';

let t: TestHub;
let tmp: string;
let u: { id: string; key: string };
let hostId: string;
let proc: AgentHostProcess;
let settingsFile: string;
let claudeDir: string;
let env: NodeJS.ProcessEnv;
let workRoot: string;

const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: u.key, body });
const settings = () => JSON.parse(readFileSync(settingsFile, 'utf8'));
const binding = async () => (await api('GET', '/api/v1/hosts')).body.data.items.find((h: any) => h.id === hostId)?.modelConfig;
const MANAGED = ['ANTHROPIC_BASE_URL', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_API_KEY', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL', 'ANTHROPIC_DEFAULT_HAIKU_MODEL'];
const managed = (s: any) => Object.fromEntries(MANAGED.filter((k) => k in s.env).map((k) => [k, s.env[k]]));
const others = (s: any) => ({ ...s, env: Object.fromEntries(Object.entries(s.env).filter(([k]) => !MANAGED.includes(k))) });

async function startHost(pairKey?: string) {
  const args = ['run', '--work-root', workRoot, '--capacity', '1'];
  if (pairKey) args.push('--hub', t.url, '--pair-key', pairKey, '--name', 'mc-e2e');
  proc = spawnAgentHost(args, env);
  const line = await proc.waitFor(/connected to \S+ as hst_\w+/);
  return line.match(/hst_\w+/)![0];
}

before(async () => {
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000, rateLimitModelTestPerMinute: 0 } as any);
  u = await t.user();
  tmp = mkdtempSync(join(tmpdir(), 'mc-e2e-'));
  claudeDir = join(tmp, 'claude-config');
  workRoot = join(tmp, 'work');
  mkdirSync(join(workRoot, 'proj'), { recursive: true });
  mkdirSync(claudeDir);
  settingsFile = join(claudeDir, 'settings.json');
  writeFileSync(settingsFile, ORIGINAL, { mode: 0o644 });
  env = { AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: claudeDir };
  const key = (await api('POST', '/api/v1/hosts/pair-key')).body.data.pairKey;
  hostId = await startHost(key);
});
after(async () => {
  proc?.kill('SIGKILL');
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('apply → six values in settings.json; apply another → backup unchanged; revert → byte-for-byte original', async () => {
  const a = (await api('POST', '/api/v1/model-configs', { name: 'A', apiType: 'anthropic', baseUrl: 'https://a.example', apiKey: 'sk-a-000011112222', modelName: 'model-a' })).body.data;
  const b = (await api('POST', '/api/v1/model-configs', { name: 'B', apiType: 'anthropic', baseUrl: 'https://b.example/x', apiKey: 'sk-b-333344445555', authMode: 'x-api-key', modelName: 'model-b' })).body.data;

  const r = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: a.id });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.data.modelConfig, { configId: a.id, name: 'A', status: 'idle', lastError: null });
  const s1 = settings();
  assert.deepEqual(managed(s1), {
    ANTHROPIC_BASE_URL: 'https://a.example',
    ANTHROPIC_AUTH_TOKEN: 'sk-a-000011112222',
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'model-a',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'model-a',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'model-a',
  });
  assert.deepEqual(others(s1), others(JSON.parse(ORIGINAL)), "the user's other keys are untouched");
  assert.equal(statSync(settingsFile).mode & 0o777, 0o600, 'the file holding the key is private');
  const backup = readFileSync(join(claudeDir, BACKUP_FILE), 'utf8');
  assert.ok(!backup.includes('sk-a-000011112222'), 'the backup holds the previous values, not the new key');

  const r2 = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: b.id });
  assert.equal(r2.status, 200, r2.text);
  assert.deepEqual(managed(settings()), {
    ANTHROPIC_BASE_URL: 'https://b.example/x',
    ANTHROPIC_API_KEY: 'sk-b-333344445555',
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'model-b',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'model-b',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'model-b',
  });
  assert.equal(readFileSync(join(claudeDir, BACKUP_FILE), 'utf8'), backup, 'custom → custom keeps the first backup');

  const del = await api('DELETE', `/api/v1/model-configs/${b.id}`);
  assert.equal(del.status, 409, 'delete while bound');
  assert.equal(del.body.code, '4098');

  const rev = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: null });
  assert.equal(rev.status, 200, rev.text);
  assert.equal(rev.body.data.modelConfig, null);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL, 'byte for byte');
  assert.equal(statSync(settingsFile).mode & 0o777, 0o644);
  assert.deepEqual(readdirSync(claudeDir), ['settings.json'], 'backup deleted');
  assert.equal(await binding(), null);
  assert.equal((await api('DELETE', `/api/v1/model-configs/${b.id}`)).status, 200);
});

test('while a turn runs: apply → 409; an edit of the bound configuration → pending, then delivered when the turn ends', async () => {
  const c = (await api('POST', '/api/v1/model-configs', { name: 'C', apiType: 'anthropic', baseUrl: 'https://c.example', apiKey: 'sk-c-666677778888', modelName: 'model-c1' })).body.data;
  const other = (await api('POST', '/api/v1/model-configs', { name: 'D', apiType: 'anthropic', baseUrl: 'https://d.example', apiKey: 'sk-d-999900001111', modelName: 'model-d' })).body.data;
  assert.equal((await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: c.id })).status, 200);

  const agent = await api('POST', '/api/v1/agents', { name: 'busy', displayName: 'Busy', desc: 'x', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' });
  assert.equal(agent.status, 201, agent.text);
  const s = await api('POST', '/api/v1/sessions', { agentId: agent.body.data.id, content: 'work slowly [sleep:3000]' });
  assert.equal(s.status, 202, s.text);
  const sessionId = s.body.sessionId;
  await eventually(async () => (await api('GET', `/api/v1/hosts/${hostId}`)).body.data.running === 1);

  const busy = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: other.id });
  assert.equal(busy.status, 409, 'apply while a turn runs');
  assert.equal(busy.body.code, '4095');
  assert.equal((await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: null })).status, 409, 'revert while a turn runs');

  const p = await api('PATCH', `/api/v1/model-configs/${c.id}`, { modelName: 'model-c2' });
  assert.equal(p.status, 200);
  assert.equal((await binding()).status, 'pending');
  await api('PATCH', `/api/v1/model-configs/${c.id}`, { modelName: 'model-c3' });
  assert.equal((await binding()).status, 'pending');
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-c1', 'nothing written while the engine runs');

  await eventually(async () => (await api('GET', `/api/v1/sessions/${sessionId}`)).body.data.status === 'active', 15_000);
  await eventually(async () => (await binding()).status === 'idle', 10_000);
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-c3', 'the latest edit reached the host');

  assert.equal((await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: null })).status, 200);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL);
});

test('host offline → 409; a pending edit is delivered when it comes back', async () => {
  const c = (await api('POST', '/api/v1/model-configs', { name: 'E', apiType: 'anthropic', baseUrl: 'https://e.example', apiKey: 'sk-e-121212121212', modelName: 'model-e1' })).body.data;
  assert.equal((await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: c.id })).status, 200);
  proc.kill('SIGTERM');
  await proc.wait();
  await eventually(async () => (await api('GET', `/api/v1/hosts/${hostId}`)).body.data.status === 'offline');

  const r = await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: null });
  assert.equal(r.status, 409);
  assert.equal(r.body.code, '4094');
  await api('PATCH', `/api/v1/model-configs/${c.id}`, { modelName: 'model-e2' });
  assert.equal((await binding()).status, 'pending');

  await startHost();
  await eventually(async () => (await binding()).status === 'idle');
  assert.equal(settings().env.ANTHROPIC_DEFAULT_OPUS_MODEL, 'model-e2');
  assert.equal((await api('POST', `/api/v1/hosts/${hostId}/model-config`, { configId: null })).status, 200);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL);
  assert.ok(!existsSync(join(claudeDir, BACKUP_FILE)));
});
