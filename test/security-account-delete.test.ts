// Issue 10, hole 12: deleting an account closes its hosts' channels at once
// (on every node) and their credentials stop working: the real agent-host
// reads "pair again" and stops; a reconnect is refused with 401.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { connectFakeHost, pairHost, spawnAgentHost, makeFakeClaude, type AgentHostProcess } from './helpers/host.js';
import { clusterSkipReason, useCluster } from './helpers/cluster.js';
import { CloseCodes } from '../host-protocol/version.js';

let t: TestHub;
let tmp: string;
const procs: AgentHostProcess[] = [];
before(async () => {
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000 });
  tmp = mkdtempSync(join(tmpdir(), 'agent-host-acctdel-'));
});
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const closeCode = (closed: Promise<{ code: number }>, ms = 5000) => Promise.race([closed.then((c) => c.code), new Promise((r) => setTimeout(() => r('still open'), ms))]);
const refusedWith = (p: Promise<unknown>) => p.then(() => 'accepted', (e: { status?: number; code?: number }) => e.status ?? e.code);

test('deleting an account stops its agent-host with "pair again" and its credentials are refused', async () => {
  const u = await t.user();
  const home = join(tmp, 'home');
  const env = { AGENT_HOST_HOME: home, CLAUDE_BIN: makeFakeClaude(tmp), CLAUDE_CONFIG_DIR: join(tmp, 'claude-config') };
  const { pairKey: key } = await t.client(u.key).hosts.pairKey();
  const p = spawnAgentHost(['run', '--hub', t.url, '--pair-key', key, '--name', 'doomed', '--work-root', tmp], env);
  procs.push(p);
  await p.waitFor(/connected to \S+ as hst_\w+/);
  // A second host of the same account, held by a raw protocol client, and one of another account.
  const second = await pairHost(t, u.key, 'second');
  const fake = await connectFakeHost(t, second.credential);
  const other = await t.user();
  const bystander = await pairHost(t, other.key, 'bystander');
  const stays = await connectFakeHost(t, bystander.credential);

  assert.deepEqual(await t.admin.admin.deleteUser(u.id), { deleted: true });

  await p.waitFor(/pair again/, 10_000);
  assert.equal(await p.wait(), 1, 'the CLI stops instead of reconnecting');
  assert.equal(await closeCode(fake.closed), CloseCodes.HOST_DELETED.code, 'every channel of the account closes with 4404');
  assert.equal(await refusedWith(connectFakeHost(t, second.credential)), 401, 'a reconnect is refused');

  const again = spawnAgentHost(['run', '--work-root', tmp], env);
  procs.push(again);
  assert.equal(await again.wait(), 1);
  assert.match(again.output(), /refused the credential.*pair again/);

  assert.equal(await stays.ping().then(() => 'alive'), 'alive', "another account's host is untouched");
  stays.close();
});

const skip = await clusterSkipReason();
if (skip) console.log(`# skipping the two-node account deletion test: ${skip}`);
const c = useCluster(skip, [{ nodeId: 'acct-a' }, { nodeId: 'acct-b' }]);

test('two nodes: deleting an account on node A closes its host channel held by node B at once', { skip }, async () => {
  const [a, b] = c.hubs;
  const u = await a.user();
  const h = await pairHost(a, u.key, 'on-b');
  const fake = await connectFakeHost(b, h.credential);
  assert.deepEqual(await a.admin.admin.deleteUser(u.id), { deleted: true });
  assert.equal(await closeCode(fake.closed), CloseCodes.HOST_DELETED.code);
  assert.equal(await refusedWith(connectFakeHost(b, h.credential)), 401, 'node B refuses the credential it had cached');
  assert.equal(await refusedWith(connectFakeHost(a, h.credential)), 401);
});
