// Issue 10, hole 1: permission modes on the owner's machine. The owner sets
// the most permissive mode other users may use (`maxGuestMode`, default
// "default": others get only `default` and `plan`); a request above it is a
// 403 (code 4032) and nothing is stored; a run never goes out above the
// agent's current ceiling, even for a session or a queued message accepted
// while the ceiling was higher. The owner may use every mode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { capMode, modeAllowed, defaultModeFor } from '../src/agents/modes.js';

const S = '/api/v1/sessions';
let t: TestHub;
let owner: { id: string; key: string };
let guest: { id: string; key: string };
let host: FakeHost;
let agentId: string;
const A = () => `/api/v1/agents/${encodeURIComponent(agentId)}`;

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
const idle = (key: string, sid: string) =>
  eventually(async () => (await t.api('GET', `${S}/${sid}`, { token: key })).body.data.status === 'active', 10_000, 20);

before(async () => {
  t = await startTestHub();
  owner = await t.user('mode-owner');
  guest = await t.user('mode-guest');
  const { credential, hostId } = await pairHost(t, owner.key);
  host = await connectFakeHost(t, credential, { capacity: 1 });
  autoEnd(host);
  const a = await eventually(async () => {
    const r = await t.api('POST', '/api/v1/agents', { token: owner.key, body: { name: 'modes', hostId, engine: 'claude-code' } });
    return r.status === 201 ? r : undefined;
  });
  agentId = a.body.data.id;
  const { token } = (await t.api('GET', `${A()}/share-link`, { token: owner.key })).body.data;
  assert.equal((await t.api('POST', `/api/v1/invites/${token}/decide`, { token: guest.key, body: { accept: true } })).status, 200);
});
after(async () => {
  host?.close();
  await t?.close();
});

test('a new agent lets others use default and plan only; the owner sees and sets maxGuestMode', async () => {
  const m = await t.api('GET', `${A()}/manage`, { token: owner.key });
  assert.equal(m.body.data.maxGuestMode, 'default');
  const mine = await t.api('GET', '/api/v1/agents/mine', { token: owner.key });
  assert.equal(mine.body.data.items[0].maxGuestMode, 'default');
  const bad = await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'bypassPermissions' } });
  assert.equal(bad.status, 400);
  const p = await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'accept-edits' } });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.data.maxGuestMode, 'accept-edits');
  const back = await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'default' } });
  assert.equal(back.body.data.maxGuestMode, 'default');
});

test('a guest above the ceiling: 403 4032 on create, PATCH and options.permissionMode; nothing is stored or sent', async () => {
  const startsBefore = host.frames.filter((f) => f.t === 'run.start').length;
  const sessionsBefore = (await t.api('GET', S, { token: guest.key })).body.data.total;
  for (const body of [
    { agentId, mode: 'auto' },
    { agentId, mode: 'accept-edits' },
    { agentId, mode: 'auto', content: 'hi' },
    { agentId, content: 'hi', options: { permissionMode: 'auto' } },
    { agentId, content: 'hi', options: { permissionMode: 'accept-edits' } },
  ]) {
    const r = await t.api('POST', S, { token: guest.key, body });
    assert.equal(r.status, 403, `${JSON.stringify(body)} → ${r.text}`);
    assert.equal(r.body.code, '4032');
    assert.match(r.body.message, /mode/);
  }
  assert.equal((await t.api('GET', S, { token: guest.key })).body.data.total, sessionsBefore, 'no session was created');

  const c = await t.api('POST', S, { token: guest.key, body: { agentId, mode: 'plan' } });
  assert.equal(c.status, 201, c.text);
  const sid = c.body.data.id;
  for (const mode of ['auto', 'accept-edits']) {
    const r = await t.api('PATCH', `${S}/${sid}`, { token: guest.key, body: { mode } });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.code, '4032');
    const s = await t.api('POST', `${S}/${sid}/messages`, { token: guest.key, body: { content: 'x', options: { permissionMode: mode } } });
    assert.equal(s.status, 403, s.text);
  }
  assert.equal((await t.api('GET', `${S}/${sid}`, { token: guest.key })).body.data.mode, 'plan');
  assert.equal((await t.api('GET', `${S}/${sid}/messages`, { token: guest.key })).body.data.total, 0);
  assert.equal(host.frames.filter((f) => f.t === 'run.start').length, startsBefore, 'no run.start went out');

  // Within the ceiling everything works.
  assert.equal((await t.api('PATCH', `${S}/${sid}`, { token: guest.key, body: { mode: 'default' } })).status, 200);
  const ok = await t.api('POST', `${S}/${sid}/messages`, { token: guest.key, body: { content: 'plan please', options: { permissionMode: 'plan' } } });
  assert.equal(ok.status, 202, ok.text);
  assert.equal((await startOf(ok.body.taskId)).mode, 'plan');
  await idle(guest.key, sid);
});

test('the owner uses every mode on their own agent; a raised ceiling opens it to guests', async () => {
  const o = await t.api('POST', S, { token: owner.key, body: { agentId, mode: 'auto', content: 'owner run' } });
  assert.equal(o.status, 202, o.text);
  assert.equal((await startOf(o.body.taskId)).mode, 'auto');
  await idle(owner.key, o.body.sessionId);

  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'auto' } })).status, 200);
  const g = await t.api('POST', S, { token: guest.key, body: { agentId, mode: 'auto', content: 'guest run' } });
  assert.equal(g.status, 202, g.text);
  assert.equal((await startOf(g.body.taskId)).mode, 'auto');
  await idle(guest.key, g.body.sessionId);
  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'default' } })).status, 200);
});

test('the ceiling lowered after a session (or a queued message) was accepted: the run goes out capped', async () => {
  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'auto' } })).status, 200);
  const c = await t.api('POST', S, { token: guest.key, body: { agentId, mode: 'auto' } });
  assert.equal(c.status, 201, c.text);
  const sid = c.body.data.id;
  // Hold the host's only slot with an owner run that is not answered yet, so the guest's message waits.
  answering = false;
  const hold = await t.api('POST', S, { token: owner.key, body: { agentId, content: 'hold the slot' } });
  assert.equal(hold.status, 202);
  await startOf(hold.body.taskId);

  const q = await t.api('POST', `${S}/${sid}/messages`, { token: guest.key, body: { content: 'queued while auto was allowed', options: { permissionMode: 'auto' } } });
  assert.equal(q.status, 202, q.text);
  assert.equal(q.body.status, 'queued');
  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'plan' } })).status, 200);

  host.send({ t: 'run.end', runId: hold.body.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  const start = await startOf(q.body.taskId);
  assert.equal(start.mode, 'plan', 'capped to the ceiling at dispatch');
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await idle(guest.key, sid);
  // The session's own default is above the ceiling now: the next turn is capped too.
  const n = await t.api('POST', `${S}/${sid}/messages`, { token: guest.key, body: { content: 'no override' } });
  assert.equal(n.status, 202, n.text);
  const ns = await startOf(n.body.taskId);
  assert.equal(ns.mode, 'plan');
  host.send({ t: 'run.end', runId: ns.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await idle(guest.key, sid);
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
  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'plan' } })).status, 200);
  const c = await t.api('POST', S, { token: guest.key, body: { agentId } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.data.mode, 'plan');
  assert.equal((await t.api('POST', S, { token: guest.key, body: { agentId, mode: 'default' } })).status, 403);
  assert.equal((await t.api('POST', S, { token: owner.key, body: { agentId } })).body.data.mode, 'default');
  assert.equal((await t.api('PATCH', A(), { token: owner.key, body: { maxGuestMode: 'default' } })).status, 200);
});
