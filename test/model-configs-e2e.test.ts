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
import { apiError } from './helpers/api-error.js';
import type { AcceptedRun, Client, HostBinding } from '../src/client/index.js';

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
let c: Client;
let hostId: string;
let proc: AgentHostProcess;
let settingsFile: string;
let claudeDir: string;
let env: NodeJS.ProcessEnv;
let workRoot: string;

const apply = (configId: string | null) => c.hosts.applyModelConfig(hostId, configId);
const settings = () => JSON.parse(readFileSync(settingsFile, 'utf8'));
const binding = async () => (await c.hosts.list()).items.find((h) => h.id === hostId)?.modelConfig as HostBinding | null | undefined;
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
  c = t.client(u.key);
  tmp = mkdtempSync(join(tmpdir(), 'mc-e2e-'));
  claudeDir = join(tmp, 'claude-config');
  workRoot = join(tmp, 'work');
  mkdirSync(join(workRoot, 'proj'), { recursive: true });
  mkdirSync(claudeDir);
  settingsFile = join(claudeDir, 'settings.json');
  writeFileSync(settingsFile, ORIGINAL, { mode: 0o644 });
  env = { AGENT_HOST_HOME: join(tmp, 'home'), CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: claudeDir };
  const key = (await c.hosts.pairKey()).pairKey;
  hostId = await startHost(key);
});
after(async () => {
  proc?.kill('SIGKILL');
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('apply → six values in settings.json; apply another → backup unchanged; revert → byte-for-byte original', async () => {
  const a = await c.modelConfigs.create({ name: 'A', apiType: 'anthropic', baseUrl: 'https://a.example', apiKey: 'sk-a-000011112222', modelName: 'model-a' });
  const b = await c.modelConfigs.create({ name: 'B', apiType: 'anthropic', baseUrl: 'https://b.example/x', apiKey: 'sk-b-333344445555', authMode: 'x-api-key', modelName: 'model-b' });

  const r = await apply(a.id);
  assert.deepEqual(r.modelConfig, { configId: a.id, name: 'A', status: 'idle', lastError: null });
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

  await apply(b.id);
  assert.deepEqual(managed(settings()), {
    ANTHROPIC_BASE_URL: 'https://b.example/x',
    ANTHROPIC_API_KEY: 'sk-b-333344445555',
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'model-b',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'model-b',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'model-b',
  });
  assert.equal(readFileSync(join(claudeDir, BACKUP_FILE), 'utf8'), backup, 'custom → custom keeps the first backup');

  await assert.rejects(c.modelConfigs.remove(b.id), apiError(409, '4098'), 'delete while bound');

  const rev = await apply(null);
  assert.equal(rev.modelConfig, null);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL, 'byte for byte');
  assert.equal(statSync(settingsFile).mode & 0o777, 0o644);
  assert.deepEqual(readdirSync(claudeDir), ['settings.json'], 'backup deleted');
  assert.equal(await binding(), null);
  assert.deepEqual(await c.modelConfigs.remove(b.id), { deleted: true });
});

test('while a turn runs: apply → 409; an edit of the bound configuration → pending, then delivered when the turn ends', async () => {
  const mc = await c.modelConfigs.create({ name: 'C', apiType: 'anthropic', baseUrl: 'https://c.example', apiKey: 'sk-c-666677778888', modelName: 'model-c1' });
  const other = await c.modelConfigs.create({ name: 'D', apiType: 'anthropic', baseUrl: 'https://d.example', apiKey: 'sk-d-999900001111', modelName: 'model-d' });
  await apply(mc.id);

  const agent = await c.agents.create({ name: 'busy', displayName: 'Busy', desc: 'x', scope: 'private', hostId, engine: 'claude-code', workDir: 'proj' });
  const s = (await c.sessions.create({ agentId: agent.id, content: 'work slowly [sleep:3000]' })) as AcceptedRun;
  const sessionId = s.sessionId;
  await eventually(async () => (await c.hosts.get(hostId)).running === 1);

  await assert.rejects(apply(other.id), apiError(409, '4095'), 'apply while a turn runs');
  await assert.rejects(apply(null), apiError(409), 'revert while a turn runs');

  await c.modelConfigs.update(mc.id, { modelName: 'model-c2' });
  assert.equal((await binding())?.status, 'pending');
  await c.modelConfigs.update(mc.id, { modelName: 'model-c3' });
  assert.equal((await binding())?.status, 'pending');
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-c1', 'nothing written while the engine runs');

  await eventually(async () => (await c.sessions.get(sessionId)).status === 'active', 15_000);
  await eventually(async () => (await binding())?.status === 'idle', 10_000);
  assert.equal(settings().env.ANTHROPIC_DEFAULT_SONNET_MODEL, 'model-c3', 'the latest edit reached the host');

  await apply(null);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL);
});

test('host offline → 409; a pending edit is delivered when it comes back', async () => {
  const mc = await c.modelConfigs.create({ name: 'E', apiType: 'anthropic', baseUrl: 'https://e.example', apiKey: 'sk-e-121212121212', modelName: 'model-e1' });
  await apply(mc.id);
  proc.kill('SIGTERM');
  await proc.wait();
  await eventually(async () => (await c.hosts.get(hostId)).status === 'offline');

  await assert.rejects(apply(null), apiError(409, '4094'));
  await c.modelConfigs.update(mc.id, { modelName: 'model-e2' });
  assert.equal((await binding())?.status, 'pending');

  await startHost();
  await eventually(async () => (await binding())?.status === 'idle');
  assert.equal(settings().env.ANTHROPIC_DEFAULT_OPUS_MODEL, 'model-e2');
  await apply(null);
  assert.equal(readFileSync(settingsFile, 'utf8'), ORIGINAL);
  assert.ok(!existsSync(join(claudeDir, BACKUP_FILE)));
});
