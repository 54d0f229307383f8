// Issue 10, hole 1: permission modes on the owner's machine. The owner sets
// the most permissive mode other users may use (`maxGuestMode`, default
// "default": others get only `default` and `plan`); a request above it is a
// 403 (code 4032) and nothing is stored; a run never goes out above the
// agent's current ceiling, even for a session or a queued message accepted
// while the ceiling was higher. The owner may use every mode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { apiError, failure } from './helpers/api-error.js';
import { capMode, modeAllowed, defaultModeFor } from '../src/agents/modes.js';
import type { AcceptedRun, AgentWriteBody, Client, NewSession, SessionView } from '../src/client/index.js';

let t: TestHub;
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let own: Client;
let gst: Client;
let host: FakeHost;
let agentId: string;
const ceiling = (maxGuestMode: AgentWriteBody['maxGuestMode']) => own.agents.update(agentId, { maxGuestMode });
/** A session created without content (the 201). */
const made = (p: Promise<SessionView | AcceptedRun>) => p as Promise<SessionView>;
/** A message that started or queued a run (the plain 202). */
const accepted = (p: Promise<SessionView | AcceptedRun>) => p as Promise<AcceptedRun>;

/** While set, every run.start is answered at once (ok), so the single slot frees up for the next. */
let answering = true;
function autoEnd(h: FakeHost) {
  h.ws.on('message', () => {
    if (!answering) return;
    for (const f of h.frames) {
      const x = f as any;
      if (x.t === 'run.start' && !x.answered) {
        x.answered = true;
        h.send({ t: 'run.end', runId: x.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      }
    }
  });
}
const startOf = (runId: string) => host.next((f) => f.t === 'run.start' && (f as any).runId === runId) as Promise<any>;
const idle = (c: Client, sid: string) => eventually(async () => (await c.sessions.get(sid)).status === 'active', 10_000, 20);

before(async () => {
  t = await startTestHub();
  owner = await t.user('mode-owner');
  guest = await t.user('mode-guest');
  own = t.client(owner.key);
  gst = t.client(guest.key);
  const { credential, hostId } = await pairHost(t, owner.key);
  host = await connectFakeHost(t, credential, { capacity: 1 });
  autoEnd(host);
  agentId = (await agentWhenReady(own, { name: 'modes', hostId, engine: 'claude-code' }, 10_000)).id;
  const { token } = await own.agents.shareLink(agentId);
  await gst.invites.decide(token, true);
});
after(async () => {
  host?.close();
  await t?.close();
});

test('a new agent lets others use default and plan only; the owner sees and sets maxGuestMode', async () => {
  assert.equal((await own.agents.manage(agentId)).maxGuestMode, 'default');
  assert.equal((await own.agents.mine()).items[0].maxGuestMode, 'default');
  await assert.rejects(ceiling('bypassPermissions' as AgentWriteBody['maxGuestMode']), apiError(400));
  assert.equal((await ceiling('accept-edits')).maxGuestMode, 'accept-edits');
  assert.equal((await ceiling('default')).maxGuestMode, 'default');
});

test('a guest above the ceiling: 403 4032 on create, PATCH and options.permissionMode; nothing is stored or sent', async () => {
  const startsBefore = host.frames.filter((f) => f.t === 'run.start').length;
  const sessionsBefore = (await gst.sessions.list()).total;
  const bodies: NewSession[] = [
    { agentId, mode: 'auto' },
    { agentId, mode: 'accept-edits' },
    { agentId, mode: 'auto', content: 'hi' },
    { agentId, content: 'hi', options: { permissionMode: 'auto' } },
    { agentId, content: 'hi', options: { permissionMode: 'accept-edits' } },
  ];
  for (const body of bodies) {
    const e = await failure(gst.sessions.create(body));
    assert.deepEqual([e.status, e.code], [403, '4032'], `${JSON.stringify(body)} → ${e.message}`);
    assert.match(e.message, /mode/);
  }
  assert.equal((await gst.sessions.list()).total, sessionsBefore, 'no session was created');

  const sid = (await made(gst.sessions.create({ agentId, mode: 'plan' }))).id;
  for (const mode of ['auto', 'accept-edits'] as const) {
    await assert.rejects(gst.sessions.update(sid, { mode }), apiError(403, '4032'));
    await assert.rejects(gst.sessions.send(sid, { content: 'x', options: { permissionMode: mode } }), apiError(403));
  }
  assert.equal((await gst.sessions.get(sid)).mode, 'plan');
  assert.equal((await gst.sessions.messages(sid)).total, 0);
  assert.equal(host.frames.filter((f) => f.t === 'run.start').length, startsBefore, 'no run.start went out');

  // Within the ceiling everything works.
  await gst.sessions.update(sid, { mode: 'default' });
  const ok = await gst.sessions.send(sid, { content: 'plan please', options: { permissionMode: 'plan' } });
  assert.equal((await startOf(ok.taskId)).mode, 'plan');
  await idle(gst, sid);
});

test('the owner uses every mode on their own agent; a raised ceiling opens it to guests', async () => {
  const o = await accepted(own.sessions.create({ agentId, mode: 'auto', content: 'owner run' }));
  assert.equal((await startOf(o.taskId)).mode, 'auto');
  await idle(own, o.sessionId);

  await ceiling('auto');
  const g = await accepted(gst.sessions.create({ agentId, mode: 'auto', content: 'guest run' }));
  assert.equal((await startOf(g.taskId)).mode, 'auto');
  await idle(gst, g.sessionId);
  await ceiling('default');
});

test('the ceiling lowered after a session (or a queued message) was accepted: the run goes out capped', async () => {
  await ceiling('auto');
  const sid = (await made(gst.sessions.create({ agentId, mode: 'auto' }))).id;
  // Hold the host's only slot with an owner run that is not answered yet, so the guest's message waits.
  answering = false;
  const hold = await accepted(own.sessions.create({ agentId, content: 'hold the slot' }));
  assert.ok(hold.taskId);
  await startOf(hold.taskId);

  const q = await gst.sessions.send(sid, { content: 'queued while auto was allowed', options: { permissionMode: 'auto' } });
  assert.equal(q.status, 'queued');
  await ceiling('plan');

  host.send({ t: 'run.end', runId: hold.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  const start = await startOf(q.taskId);
  assert.equal(start.mode, 'plan', 'capped to the ceiling at dispatch');
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await idle(gst, sid);
  // The session's own default is above the ceiling now: the next turn is capped too.
  const n = await gst.sessions.send(sid, { content: 'no override' });
  const ns = await startOf(n.taskId);
  assert.equal(ns.mode, 'plan');
  host.send({ t: 'run.end', runId: ns.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await idle(gst, sid);
  answering = true;
});

test('the rule: owner unlimited, others up to the ceiling, unknown values count as the lowest', () => {
  const a = { ownerId: 'u_owner', maxGuestMode: 'default' };
  for (const m of ['plan', 'default', 'accept-edits', 'auto']) assert.equal(modeAllowed(a, 'u_owner', m), true, m);
  assert.deepEqual(['plan', 'default', 'accept-edits', 'auto'].map((m) => modeAllowed(a, 'u_guest', m)), [true, true, false, false]);
  assert.equal(modeAllowed(a, 'u_guest', 'bypassPermissions'), false);
  assert.equal(capMode(a, 'u_guest', 'auto'), 'default');
  assert.equal(capMode(a, 'u_owner', 'auto'), 'auto');
  assert.equal(capMode({ ownerId: 'u_owner', maxGuestMode: 'nonsense' }, 'u_guest', 'default'), 'plan');
  assert.equal(capMode(a, 'u_guest', '__proto__'), 'plan');
  assert.equal(defaultModeFor({ ownerId: 'u_owner', maxGuestMode: 'plan' }, 'u_guest'), 'plan');
  assert.equal(defaultModeFor({ ownerId: 'u_owner', maxGuestMode: 'plan' }, 'u_owner'), 'default');
});

test('a ceiling of plan: a guest\'s new session starts in plan, default is refused', async () => {
  await ceiling('plan');
  assert.equal((await made(gst.sessions.create({ agentId }))).mode, 'plan');
  await assert.rejects(gst.sessions.create({ agentId, mode: 'default' }), apiError(403));
  assert.equal((await made(own.sessions.create({ agentId }))).mode, 'default');
  await ceiling('default');
});
