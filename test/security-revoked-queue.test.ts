// A user who can no longer use an agent gets nothing more run on its owner's machine. Messages
// queued while they could (behind their own running turn, up to 10 a session) are checked again at
// dispatch: the owner removing a member, disabling the agent, or taking a public agent out of the
// market ends them `AGENT_UNAVAILABLE` without a run.start (found by an audit: each still started
// as the running turn ended). Other users' messages are not touched.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, Client, SessionView } from '../src/client/index.js';

let t: TestHub;
let owner: { id: string; key: string };
let own: Client;
let host: FakeHost;
let hostId: string;

before(async () => {
  t = await startTestHub();
  owner = await t.user('revoke-owner');
  own = t.client(owner.key);
  const paired = await pairHost(t, owner.key);
  hostId = paired.hostId;
  host = await connectFakeHost(t, paired.credential, { capacity: 1 });
});
after(async () => {
  host?.close();
  await t?.close();
});

const accepted = (p: Promise<SessionView | AcceptedRun>) => p as Promise<AcceptedRun>;
const startOf = (runId: string) => host.next((f) => f.t === 'run.start' && (f as any).runId === runId) as Promise<any>;
const endRun = (runId: string) => host.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
const task = async (id: string) =>
  (await t.hub.ctx.em().getConnection().execute(`select status, error_code from session_tasks where id = ?`, [id]))[0] as { status: string; error_code: string | null };
const sent = (runId: string) => host.frames.some((f) => f.t === 'run.start' && (f as any).runId === runId);

/** A guest's first message holds the host's only slot; its second waits behind it (queued). */
async function guestWithQueued(agentId: string, guest: Client) {
  const first = await accepted(guest.sessions.create({ agentId, content: 'first' }));
  await startOf(first.taskId);
  const queued = await guest.sessions.send(first.sessionId, { content: 'QUEUED PROMPT' });
  assert.equal(queued.status, 'queued');
  return { first, queued };
}

/** The guest's queued message ends AGENT_UNAVAILABLE and never reaches the host; the owner's next run starts (the slot is free). */
async function refusedAtDispatch(first: AcceptedRun, queued: AcceptedRun, agentId: string) {
  endRun(first.taskId);
  const row = await eventually(async () => { const r = await task(queued.taskId); return r.status !== 'queued' && r.status !== 'running' ? r : undefined; }, 10_000, 20);
  assert.deepEqual(row, { status: 'failed', error_code: 'AGENT_UNAVAILABLE' });
  assert.equal(sent(queued.taskId), false, 'no run.start went out for the queued message');
  const mine = await accepted(own.sessions.create({ agentId, content: 'owner after' }));
  await startOf(mine.taskId);
  endRun(mine.taskId);
  await eventually(async () => (await task(mine.taskId)).status === 'completed', 10_000, 20);
}

async function sharedAgent(name: string) {
  const agentId = (await agentWhenReady(own, { name, hostId, engine: 'claude-code' }, 10_000)).id;
  const u = await t.user(`${name}-guest`);
  const guest = t.client(u.key);
  await guest.invites.decide((await own.agents.shareLink(agentId)).token, true);
  return { agentId, guest, guestId: u.id };
}

test('a member removed while a message of theirs waits: it never starts on the owner\'s host', async () => {
  const { agentId, guest, guestId } = await sharedAgent('revoke-member');
  const { first, queued } = await guestWithQueued(agentId, guest);
  await own.agents.removeMember(agentId, guestId);
  await refusedAtDispatch(first, queued, agentId);
});

test('an agent disabled while a guest\'s message waits: it never starts; the session reads the failure', async () => {
  const { agentId, guest } = await sharedAgent('revoke-disable');
  const { first, queued } = await guestWithQueued(agentId, guest);
  await own.agents.update(agentId, { enable: false });
  endRun(first.taskId);
  const row = await eventually(async () => { const r = await task(queued.taskId); return r.status === 'failed' ? r : undefined; }, 10_000, 20);
  assert.equal(row.error_code, 'AGENT_UNAVAILABLE');
  assert.equal(sent(queued.taskId), false);
  await own.agents.update(agentId, { enable: true });
});

test('a public agent taken out of the market: a stranger\'s waiting message never starts; another member\'s still does', async () => {
  const agentId = (await agentWhenReady(own, { name: 'revoke-public', scope: 'public', step: 'submit', hostId, engine: 'claude-code', tags: ['x'] }, 10_000)).id;
  await t.admin.admin.approveAgent(agentId);
  const stranger = t.client((await t.user('revoke-stranger')).key);
  const member = t.client((await t.user('revoke-member2')).key);
  await member.invites.decide((await own.agents.shareLink(agentId)).token, true);
  const { first, queued } = await guestWithQueued(agentId, stranger);
  const kept = await accepted(member.sessions.create({ agentId, content: 'member waits' }));
  assert.equal(kept.status, 'queued');
  await own.agents.update(agentId, { scope: 'private' });
  endRun(first.taskId);
  // The stranger's message is refused; the member's (still allowed) runs in its turn.
  await startOf(kept.taskId);
  assert.deepEqual(await task(queued.taskId), { status: 'failed', error_code: 'AGENT_UNAVAILABLE' });
  assert.equal(sent(queued.taskId), false);
  endRun(kept.taskId);
  await eventually(async () => (await task(kept.taskId)).status === 'completed', 10_000, 20);
});
