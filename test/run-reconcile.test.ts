// Issue 14 (a): a run.start lost between the node that dispatched it and the
// node holding the host's channel (a pub/sub publish that met a node not yet
// resubscribed after a Redis restart) left the run `processing` until the
// host reconnected. The node holding the channel now compares, every so
// often, the runs the database holds open on its hosts with the runs their
// channels carried, and sends a lost run.start again — once per run and
// channel. Losing the publish is simulated by dropping the run.start on its
// way into the node's channels (where a publish from another node arrives).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FrameOf, HubToHost } from '../host-protocol/frames.js';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { answeringHost, type AnsweringHost } from './helpers/answering-host.js';

const hubs: TestHub[] = [];
const hosts: Array<FakeHost | AnsweringHost> = [];
after(async () => {
  for (const h of hosts) h.close();
  for (const h of hubs) await h.close();
});

type HostMsg = { k: string; frame?: { t?: string } };
/**
 * Drops the next `n` run.starts on their way into the hub's host channels; answers what was dropped,
 * and `late` hands a message in as if it arrived now.
 */
function dropRunStarts(t: TestHub): { arm(n: number): void; dropped: HostMsg[]; late(m: HostMsg): void } {
  const gateway = t.hub.runFrames.gateway as unknown as { hostMsg(m: HostMsg): void };
  const real = gateway.hostMsg.bind(gateway);
  let left = 0;
  const dropped: HostMsg[] = [];
  gateway.hostMsg = (m) => {
    if (left > 0 && m.k === 'send' && m.frame?.t === 'run.start') {
      left--;
      dropped.push(m);
      return;
    }
    real(m);
  };
  return { arm: (n) => void (left = n), dropped, late: real };
}

async function agentOn(t: TestHub, key: string, hostId: string): Promise<string> {
  const r = await t.api('POST', '/api/v1/agents', { token: key, body: { name: 'reconcile', scope: 'private', hostId, engine: 'claude-code' } });
  assert.equal(r.status, 201, r.text);
  return r.body.data.id;
}

async function session(t: TestHub, key: string, agentId: string): Promise<string> {
  const s = await t.api('POST', '/api/v1/sessions', { token: key, body: { agentId } });
  assert.equal(s.status, 201, s.text);
  return s.body.data.id;
}

async function send(t: TestHub, key: string, sessionId: string, content: string): Promise<string> {
  const r = await t.api('POST', `/api/v1/sessions/${sessionId}/messages`, { token: key, body: { content } });
  assert.equal(r.status, 202, r.text);
  return r.body.taskId;
}

const startsOf = (h: FakeHost, runId: string) => h.frames.filter((f) => f.t === 'run.start' && f.runId === runId).length;

test('the channel node sends a lost run.start again, once; a run its channel carried is never sent twice', async () => {
  // The default heartbeat window: the periodic pass waits longer than this test, which calls it itself.
  const t = await startTestHub();
  hubs.push(t);
  const drop = dropRunStarts(t);
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await connectFakeHost(t, credential, { capacity: 4 });
  hosts.push(host);
  const agentId = await agentOn(t, u.key, hostId);
  const scheduler = t.hub.runFrames.scheduler;

  // Carried: the host got it and runs it (no answer yet). Nothing to send again.
  const carried = await send(t, u.key, await session(t, u.key, agentId), 'carried');
  await host.next((f) => f.t === 'run.start' && f.runId === carried);
  assert.equal(await scheduler.reconcile(0), 0, 'a run the channel carried is not sent again');
  assert.equal(startsOf(host, carried), 1);

  // Lost: claimed and `running` in the database, its run.start dropped on its way to the channel.
  drop.arm(1);
  const lostSession = await session(t, u.key, agentId);
  const lost = await send(t, u.key, lostSession, 'lost');
  assert.equal(drop.dropped.length, 1, 'the run.start was dropped');
  assert.equal(startsOf(host, lost), 0, 'the host never heard of the run');
  assert.equal((await t.api('GET', `/api/v1/sessions/${lostSession}`, { token: u.key })).body.data.status, 'processing');

  assert.equal(await scheduler.reconcile(0), 1, 'the lost run.start is sent again');
  const again = await host.next<FrameOf<HubToHost, 'run.start'>>((f) => f.t === 'run.start' && f.runId === lost);
  assert.equal(again.prompt, 'lost');
  assert.equal(again.sessionId, lostSession);
  assert.equal(await scheduler.reconcile(0), 0, 'sent again once: the channel carries it now');

  // The original publish, arriving late (an ioredis offline queue flushed after the resend), is not passed on twice.
  drop.late(drop.dropped[0]);
  await host.ping(); // anything sent before the pong has arrived
  assert.equal(startsOf(host, lost), 1, 'the late original is dropped on the channel that already got the run');

  // The host answers it on the same channel: frames are accepted and the run completes.
  host.send({ t: 'run.message', runId: lost, role: 'assistant', blocks: [{ kind: 'text', content: 'answer' }] });
  host.send({ t: 'run.end', runId: lost, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await eventually(async () => (await t.api('GET', `/api/v1/sessions/${lostSession}`, { token: u.key })).body.data.status === 'active', 10_000, 50);
  const msgs = (await t.api('GET', `/api/v1/sessions/${lostSession}/messages`, { token: u.key })).body.data.items;
  assert.deepEqual(msgs.map((m: any) => m.role), ['user', 'assistant']);
  assert.equal(await scheduler.reconcile(0), 0);
  assert.equal(t.hub.runFrames.gateway.droppedRunFrames, 0, 'no frame of the resent run was dropped');
});

test('without help: the periodic pass finds a lost run.start and the run is answered, started once', async () => {
  // A short heartbeat window: the pass runs every second and judges runs claimed over a second ago.
  const t = await startTestHub({ hostHeartbeatTimeoutMs: 3000 });
  hubs.push(t);
  const drop = dropRunStarts(t);
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  const host = await answeringHost(t, credential, { capacity: 4 });
  hosts.push(host);
  const agentId = await agentOn(t, u.key, hostId);
  drop.arm(2);
  const sids = [await session(t, u.key, agentId), await session(t, u.key, agentId), await session(t, u.key, agentId)];
  const runs = [];
  for (const [i, sid] of sids.entries()) runs.push(await send(t, u.key, sid, `m${i}`));
  assert.equal(drop.dropped.length, 2);
  await eventually(async () => {
    const r = await t.api('GET', '/api/v1/sessions?pageSize=50', { token: u.key });
    return r.body.data.items.every((s: any) => s.status === 'active' && s.pendingRuns === 0);
  }, 20_000, 100);
  assert.deepEqual(runs.map((id) => host.starts.get(id)), [1, 1, 1], 'every run started once on the host');
});
