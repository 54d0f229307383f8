// A pair key given on the command line (`--key`, `--pair-key`) sits in the process list, which every user
// of the machine reads (/proc/<pid>/cmdline), for as long as npx and agent-host take to start and pair: another
// local user could pair a host of their own into the owner's account with it first. AGENT_HOST_PAIR_KEY
// takes it from the environment instead (/proc/<pid>/environ is the owner's only). And a `run` restarted
// with the key it already paired with (a service unit, a container restart) goes on with the pairing it
// made, rather than stopping at the spent key's refusal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, makeFakeClaude, type AgentHostProcess } from './helpers/host.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-claude.mjs', import.meta.url));
let t: TestHub;
let tmp: string;
const procs: AgentHostProcess[] = [];
before(async () => {
  t = await startTestHub();
  tmp = mkdtempSync(join(tmpdir(), 'agent-host-pairenv-'));
});
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

function spawn(args: string[], env: NodeJS.ProcessEnv): AgentHostProcess {
  const p = spawnAgentHost(args, env);
  procs.push(p);
  return p;
}

function envFor(name: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const root = join(tmp, name, 'work');
  mkdirSync(root, { recursive: true });
  return { AGENT_HOST_HOME: join(tmp, name, 'home'), CLAUDE_BIN: makeFakeClaude(join(tmp, name)), CLAUDE_CONFIG_DIR: join(tmp, name, 'claude'), ...extra };
}
const stored = (env: NodeJS.ProcessEnv) => JSON.parse(readFileSync(join(env.AGENT_HOST_HOME!, 'credential.json'), 'utf8'));

test('pair takes the key from AGENT_HOST_PAIR_KEY: it never appears in the arguments', async () => {
  const u = await t.user();
  const key = (await t.client(u.key).hosts.pairKey()).pairKey;
  const env = envFor('pair', { AGENT_HOST_PAIR_KEY: key });
  const p = spawn(['pair', '--hub', t.url, '--name', 'env-box'], env);
  await p.waitFor(/paired with \S+ as hst_\w+/);
  assert.equal(await p.wait(), 0);
  assert.ok(!p.proc.spawnargs.some((a) => a.includes(key)), 'the key is not in the process arguments');
  const hosts = (await t.client(u.key).hosts.list()).items;
  assert.deepEqual(hosts.map((h) => h.name), ['env-box']);
  assert.equal(stored(env).hostId, hosts[0].id);
  assert.ok(!JSON.stringify(stored(env)).includes(key), 'the credential file keeps no usable copy of the key');

  const again = spawn(['pair', '--hub', t.url, '--name', 'env-box'], env); // a script run twice
  await again.waitFor(/already paired with this pair key as hst_\w+/);
  assert.equal(await again.wait(), 0);
  assert.equal((await t.client(u.key).hosts.list()).items.length, 1);
});

test('run takes the key from AGENT_HOST_PAIR_KEY, and a restart with the same key goes on with the pairing it made', async () => {
  const u = await t.user();
  const key = (await t.client(u.key).hosts.pairKey()).pairKey;
  const env = envFor('run', { AGENT_HOST_PAIR_KEY: key });
  const args = ['run', '--hub', t.url, '--name', 'env-run', '--work-root', join(tmp, 'run', 'work')];
  const first = spawn(args, env);
  const hostId = (await first.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
  first.kill('SIGTERM');
  await first.wait();

  const again = spawn(args, { ...env, CLAUDE_BIN: FAKE, FAKE_CLAUDE_LOG: join(tmp, 'run', 'claude.log') }); // the same command: the key is spent, the pairing it made is kept
  assert.match(await again.waitFor(/connected to \S+ as hst_\w+/), new RegExp(hostId));
  assert.match(again.output(), /already paired with this pair key/);
  // The owner's own runs get agent-host's whole environment: not the key, which agent-host read and dropped.
  const c = t.client(u.key);
  const agent = await c.agents.create({ name: 'env-agent', hostId, engine: 'claude-code', workDir: '' });
  await c.sessions.create({ agentId: agent.id, content: 'hello' });
  await again.waitFor(/run \S+ completed/);
  const engine = JSON.parse(readFileSync(join(tmp, 'run', 'claude.log'), 'utf8').trim().split('\n')[0]);
  assert.ok(engine.envKeys.includes('AGENT_HOST_HOME') && !engine.envKeys.includes('AGENT_HOST_PAIR_KEY'), `the engine's environment: ${engine.envKeys}`);
  again.kill('SIGTERM');
  await again.wait();
  assert.equal((await t.client(u.key).hosts.list()).items.length, 1, 'no second host');

  // A spent key the stored pairing did not come from is still refused.
  const other = envFor('run-other', { AGENT_HOST_PAIR_KEY: key });
  const refused = spawn(['run', '--hub', t.url, '--work-root', join(tmp, 'run-other', 'work')], other);
  await refused.waitFor(/pairing refused \(4\d\d\)/);
  assert.notEqual(await refused.wait(), 0);
});

test('a key given both ways is a usage error (which one was meant?)', async () => {
  const env = envFor('both', { AGENT_HOST_PAIR_KEY: 'ahp_from_env' });
  const p = spawn(['pair', '--hub', t.url, '--key', 'ahp_from_argv'], env);
  await p.waitFor(/AGENT_HOST_PAIR_KEY/);
  assert.equal(await p.wait(), 2);
});
