// A run on another account's agent is charged at most what the runner's balance covers (the usage is
// the owner's host's word), and a message was accepted at any balance above zero: a guest holding one
// token ran a run of any size for that token, and — its messages accepted together, each run charged
// only what was left — as many at once as it had sessions. Each guest run must now be backed by
// GUEST_RUN_MIN_BALANCE: a message on another account's agent is accepted only while the sender's
// balance covers that much for it and for each of its guest messages already running or waiting, and a
// waiting one starts only while the balance covers it and the guest runs already running. Runs on one's
// own agent keep the rule of before (a balance above zero).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

const FLOOR = 1_000;
let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ starterTokens: 10_000, guestRunMinBalance: FLOOR });
});
after(async () => {
  for (const h of hosts) h.close();
  await t.close();
});

const setBalance = (userId: string, n: number) => t.hub.ctx.em().getConnection().execute(`update users set balance = ? where id = ?`, [n, userId]);
const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r || 'status' in r, `a message accepted, got ${JSON.stringify(r)}`);
  return r as AcceptedRun;
}

/** An owner's agent on a fake host of the given capacity, shared with a guest through the link. */
async function sharedAgent(capacity: number) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity });
  hosts.push(host);
  const own = t.client(owner.key);
  const a = await agentWhenReady(own, { name: 'shared-helper', hostId, engine: 'claude-code' });
  const guest = await t.user();
  await t.client(guest.key).invites.decide((await own.agents.shareLink(a.id)).token, true);
  return { owner, guest, host, agentId: a.id };
}

test('a guest below the floor is refused on another account\'s agent; an owner below it still runs its own', async () => {
  const { owner, guest, agentId } = await sharedAgent(4);
  await setBalance(guest.id, FLOOR - 1);
  await assert.rejects(t.client(guest.key).sessions.create({ agentId, content: 'one token, any run' }), apiError(429, '4091'));
  await setBalance(owner.id, 1);
  assert.equal(accepted(await t.client(owner.key).sessions.create({ agentId, content: 'my own agent' })).status, 'processing');
  await setBalance(guest.id, FLOOR);
  assert.equal(accepted(await t.client(guest.key).sessions.create({ agentId, content: 'backed' })).status, 'processing');
});

test('each guest message running or waiting is backed: a balance of 2.5 floors runs two at once, the third is refused', async () => {
  const { guest, host, agentId } = await sharedAgent(10);
  await setBalance(guest.id, FLOOR * 2.5);
  const g = t.client(guest.key);
  accepted(await g.sessions.create({ agentId, content: 'first' }));
  accepted(await g.sessions.create({ agentId, content: 'second' }));
  await assert.rejects(g.sessions.create({ agentId, content: 'third' }), (e: any) => e.status === 429 && e.code === '4091' && /needs 1000 tokens of your balance behind it/.test(e.message));
  // Sent together (one accept batch): still two.
  await setBalance(guest.id, FLOOR * 4.5);
  const got = await Promise.all([0, 1, 2, 3].map((i) => g.sessions.create({ agentId, content: `burst ${i}` }).then(() => 202, (e) => e.status)));
  assert.deepEqual(got.sort(), [202, 202, 429, 429]);
  await eventually(async () => (host.frames.filter((f) => f.t === 'run.start').length === 4 ? true : undefined), 5000, 20);
});

test('a waiting guest message starts only while the balance backs it: after a run took the balance below the floor it waits', async () => {
  const { guest, host, agentId } = await sharedAgent(1);
  await setBalance(guest.id, FLOOR * 2);
  const g = t.client(guest.key);
  const first = accepted(await g.sessions.create({ agentId, content: 'first' }));
  const start: any = await host.next((f: any) => f.t === 'run.start' && f.sessionId === first.sessionId);
  const queued = accepted(await g.sessions.send(first.sessionId, { content: 'next, behind the first' }));
  assert.equal(queued.status, 'queued');
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: FLOOR * 1.5, outputTokens: 0 } });
  await eventually(async () => ((await balance(guest.key)) === FLOOR / 2 ? true : undefined), 5000, 50);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(host.frames.filter((f: any) => f.t === 'run.start' && f.sessionId === first.sessionId).length, 1, 'the waiting message did not start');
  const row = await t.hub.ctx.em().getConnection().execute(`select status from session_tasks where id = ?`, [queued.taskId]);
  assert.equal(row[0].status, 'queued');
});
