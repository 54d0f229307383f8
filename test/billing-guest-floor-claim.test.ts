// The guest floor was not held when several waiting guest messages started in one claim. A waiting guest
// message starts only while the balance is at least GUEST_RUN_MIN_BALANCE times its guest runs running plus
// one; hub_claim_many checked each against the runs running before the call, not the guest's other picks in
// it (hub_accept counts those), so one claim started them all. A guest queues three messages (three floors
// at accept), spends two floors in the store, and the host's lease ends with room for three: all three
// started on one floor, each then charged at most what was left, the owner's host working for free.
// Expected: one starts, the others wait.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

const FLOOR = 1_000;
let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ starterTokens: 0, guestRunMinBalance: FLOOR } as any);
});
after(async () => {
  for (const h of hosts) h.close();
  await t.close();
});

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;

test('waiting guest messages started by one claim are each backed by the floor', async () => {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 4 });
  hosts.push(host);
  const own = t.client(owner.key);
  const a = await agentWhenReady(own, { name: 'shared-helper', hostId, engine: 'claude-code' });
  const guest = await t.user();
  const g = t.client(guest.key);
  await g.invites.decide((await own.agents.shareLink(a.id)).token, true);
  await t.admin.admin.grantTokens(guest.id, 3); // 3,000 tokens: three floors
  assert.equal(await balance(guest.key), 3 * FLOOR);

  // The host is busy applying model settings (its lease): the guest's three messages wait, each backed at accept.
  // An hour's lease, ended below by the test: no stall of this machine lets it lapse before the redeem.
  await t.hub.ctx.em().getConnection().execute(`update hosts set settings_until = now() + interval '1 hour' where id = ?`, [hostId]);
  const queued: AcceptedRun[] = [];
  for (const i of [1, 2, 3]) {
    const r = (await g.sessions.create({ agentId: a.id, content: `job ${i}` })) as SessionView | AcceptedRun;
    assert.ok('taskId' in r, `accepted: ${JSON.stringify(r)}`);
    queued.push(r as AcceptedRun);
  }
  const [row] = await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from session_tasks where user_id = ? and status = 'queued'`, [guest.id]);
  assert.equal(row.n, 3, 'all three wait for the lease');

  // The guest spends two floors in the store: one floor left, which backs one guest run.
  await g.billing.redeem('coffee-voucher');
  assert.equal(await balance(guest.key), FLOOR);

  // The lease ends: the scheduler drains the host (what its lease timer does), which has room for all three.
  await t.hub.ctx.em().getConnection().execute(`update hosts set settings_until = null where id = ?`, [hostId]);
  await t.hub.runFrames.scheduler.drain(hostId); // resolves once its claim is committed and what it started is sent
  const [running] = await t.hub.ctx.em().getConnection().execute(
    `select count(*)::int as n from session_tasks where user_id = ? and status = 'running' and gmin > 0`, [guest.id]);
  const startsOf = () => host.frames.filter((f: any) => f.t === 'run.start' && queued.some((q) => q.taskId === f.runId));
  await eventually(async () => startsOf().length >= 1 || undefined, 5000, 10).catch(() => {});
  const starts = startsOf();
  assert.ok(starts.length >= 1, 'the drain ran (one backed message started)');
  assert.equal(running.n, 1, `one floor of balance backs one guest run; ${running.n} guest runs were started by one claim`);
  assert.equal(starts.length, 1);
});
