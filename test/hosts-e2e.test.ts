// End to end with the real agent-host CLI process (node --import tsx
// src/host-cli/main.ts) against a hub on port 0, and a fake `claude`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, statSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { spawnAgentHost, makeFakeClaude, eventually, type AgentHostProcess } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
let tmp: string;
const procs: AgentHostProcess[] = [];
before(async () => {
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000 });
  tmp = mkdtempSync(join(tmpdir(), 'agent-host-e2e-'));
});
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

function workRoot(): string {
  const root = join(tmp, 'work');
  mkdirSync(join(root, 'proj', 'a'), { recursive: true });
  mkdirSync(join(root, 'proj', 'b'), { recursive: true });
  writeFileSync(join(root, 'README.md'), 'not a directory');
  const outside = join(tmp, 'outside');
  mkdirSync(join(outside, 'secret'), { recursive: true });
  symlinkSync(outside, join(root, 'escape'));
  symlinkSync(join(root, 'proj'), join(root, 'inner'));
  return root;
}

const run = (args: string[], env: NodeJS.ProcessEnv) => {
  const p = spawnAgentHost(args, env);
  procs.push(p);
  return p;
};

test('pair, appear, list, rename, offline on kill, back on restart, gone on delete', async () => {
  const u = await t.user();
  const home = join(tmp, 'home');
  const env = { AGENT_HOST_HOME: home, CLAUDE_BIN: makeFakeClaude(join(tmp)), CLAUDE_CONFIG_DIR: join(tmp, 'claude-config') };
  const root = workRoot();
  const c = t.client(u.key);
  const key = (await c.hosts.pairKey()).pairKey;

  const p1 = run(['run', '--hub', t.url, '--pair-key', key, '--name', 'e2e-box', '--work-root', root, '--capacity', '2'], env);
  const line = await p1.waitFor(/connected to \S+ as hst_\w+/);
  const hostId = line.match(/hst_\w+/)![0];
  assert.equal(statSync(join(home, 'credential.json')).mode & 0o777, 0o600, 'the credential file is private');
  const stored = JSON.parse(readFileSync(join(home, 'credential.json'), 'utf8'));
  assert.equal(stored.hostId, hostId);
  assert.match(stored.credential, /^ahh_/);

  const av = await c.agents.availableHosts();
  assert.deepEqual(av, [{ id: hostId, name: 'e2e-box', status: 'online', engines: [{ id: 'claude-code', displayName: 'Claude Code' }] }]);
  const h = await c.hosts.get(hostId);
  assert.equal(h.capacity, 2);
  assert.equal(h.engines[0].version, '9.9.9', 'the version comes from `claude --version`');

  const dirs = (path?: string) => c.hosts.directories(hostId, path);
  assert.deepEqual(await dirs(), { path: '', entries: [{ name: 'inner', path: 'inner' }, { name: 'proj', path: 'proj' }] }, 'files and symlinks leading out are not listed');
  assert.deepEqual((await dirs('proj')).entries.map((e) => e.path), ['proj/a', 'proj/b']);
  assert.deepEqual((await dirs('inner')).entries.map((e) => e.name), ['a', 'b']);
  await assert.rejects(dirs('escape'), apiError(400), 'a symlink out of the work root is refused by the host');
  await assert.rejects(dirs('escape/secret'), apiError(400));
  await assert.rejects(dirs('../outside'), apiError(400));
  await assert.rejects(dirs('nope'), apiError(404));

  const rm = await c.hosts.setRemark(hostId, 'renamed');
  assert.equal(rm.remark, 'renamed');
  assert.equal((await c.agents.availableHosts())[0].name, 'renamed');
  const ref = await c.hosts.refresh(hostId);
  assert.equal(ref.engines[0].id, 'claude-code');

  p1.kill('SIGKILL');
  await p1.wait();
  await eventually(async () => (await c.hosts.get(hostId)).status === 'offline', 8000);
  assert.deepEqual(await c.agents.availableHosts(), []);

  const p2 = run(['run', '--work-root', root], env);
  await p2.waitFor(/connected to \S+ as hst_\w+/);
  assert.equal((await c.hosts.get(hostId)).status, 'online');

  const used = run(['pair', '--hub', t.url, '--key', key], { ...env, AGENT_HOST_HOME: join(tmp, 'home-used') });
  assert.equal(await used.wait(), 1, 'a used pair key is refused');
  assert.match(used.output(), /pairing refused \(401\)/);

  assert.deepEqual(await c.hosts.remove(hostId), { deleted: true });
  await p2.waitFor(/disconnected: host deleted/);
  assert.equal(await p2.wait(), 1, 'a deleted host stops instead of reconnecting');
  await assert.rejects(c.hosts.get(hostId), apiError(404));
  assert.deepEqual(await c.agents.availableHosts(), []);

  const revoked = run(['run', '--work-root', root], env);
  assert.equal(await revoked.wait(), 1, 'a revoked credential is refused');
  assert.match(revoked.output(), /refused the credential/);
});

test('a forged credential is refused; no claude executable, no engine', async () => {
  const home = join(tmp, 'forged');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'credential.json'), JSON.stringify({ hub: t.url, hostId: 'hst_forged', credential: 'ahh_forged', name: 'x' }));
  const forged = run(['run', '--work-root', tmp], { AGENT_HOST_HOME: home });
  assert.equal(await forged.wait(), 1);
  assert.match(forged.output(), /refused the credential/);

  const u = await t.user();
  const key = (await t.client(u.key).hosts.pairKey()).pairKey;
  const env = { AGENT_HOST_HOME: join(tmp, 'noclaude'), CLAUDE_BIN: join(tmp, 'no-such-claude') };
  const paired = run(['pair', '--hub', t.url, '--key', key, '--name', 'bare'], env);
  assert.equal(await paired.wait(), 0, paired.output());
  const p = run(['run', '--work-root', tmp], env);
  await p.waitFor(/connected to \S+ as hst_\w+ \(no engines/);
  const list = (await t.client(u.key).hosts.list()).items;
  assert.equal(list[0].status, 'online');
  assert.deepEqual(list[0].engines, []);
  p.kill('SIGTERM');
  assert.equal(await p.wait(), 0, 'SIGTERM stops cleanly');
  // The terminal closing (SIGHUP) stops it the same way: engines run in process groups of their own,
  // out of the terminal's reach, so agent-host must stop them itself rather than die of the signal.
  const hup = run(['run', '--work-root', tmp], env);
  await hup.waitFor(/connected to \S+ as hst_\w+/);
  hup.kill('SIGHUP');
  assert.equal(await hup.wait(), 0, 'SIGHUP stops cleanly');
});

test('a dropped connection is retried with backoff and a status line each way', async () => {
  // A TCP proxy in front of the hub lets the test cut every connection without touching the hub.
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((c) => {
    const u = net.connect(t.hub.port, '127.0.0.1');
    for (const s of [c, u]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s)).on('error', () => s.destroy());
    }
    c.pipe(u);
    u.pipe(c);
    c.on('close', () => u.destroy());
    u.on('close', () => c.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  try {
    const hub = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const u = await t.user();
    const key = (await t.client(u.key).hosts.pairKey()).pairKey;
    const p = run(['run', '--hub', hub, '--pair-key', key, '--work-root', tmp], { AGENT_HOST_HOME: join(tmp, 'home-proxy'), CLAUDE_BIN: join(tmp, 'claude') });
    const hostId = (await p.waitFor(/connected to \S+ as hst_\w+/)).match(/hst_\w+/)![0];
    for (const s of sockets) s.destroy();
    await p.waitFor(/disconnected from \S+ \(1006[^)]*\); reconnecting in \d+\.\ds/);
    await p.waitFor(/connected to [\s\S]*disconnected from [\s\S]*connected to \S+ as hst_/);
    assert.equal((await t.client(u.key).hosts.get(hostId)).status, 'online');
    p.kill('SIGTERM');
    await p.wait();
  } finally {
    proxy.close();
  }
});

test('--help on every command; usage errors exit 2', async () => {
  const cases = [['--help'], ['pair', '--help'], ['run', '--help'], ['help', 'run']].map((args) => ({ args, p: run(args, {}) }));
  const bad = run(['pair', '--hub', t.url], {});
  for (const { args, p } of cases) {
    assert.equal(await p.wait(), 0, args.join(' '));
    assert.match(p.output(), /agent-host (pair|run|\d)/);
  }
  assert.equal(await bad.wait(), 2);
  assert.match(bad.output(), /needs --hub and a pair key \(AGENT_HOST_PAIR_KEY, or --key\)/);
});
