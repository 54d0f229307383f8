// A waiting message is cancelled only by its session's owner, and only through its own session:
// a stranger who learns a session id and a task id (they travel in links, logs and screenshots)
// gets 404 and the message keeps its place. The generated isolation test names a task id that
// does not exist, so it cannot tell; this one names a real waiting task.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady } from './helpers/host.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('a stranger cannot cancel another account\'s waiting message, by its session or through its own', async () => {
  const owner = await t.user('queue-owner');
  const c = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await agentWhenReady(c, { name: 'queue-guard', hostId, engine: 'claude-code' });
  const first: any = await c.sessions.create({ agentId: a.id, content: 'hold the slot' });
  await host.next((f) => f.t === 'run.start' && (f as any).runId === first.taskId);
  const waiting = await c.sessions.send(first.sessionId, { content: 'wait your turn' });
  assert.equal((await c.sessions.queue(first.sessionId)).items.length, 1);

  const stranger = await t.user('queue-stranger');
  const s = t.client(stranger.key);
  await assert.rejects(s.chat.cancelQueued(first.sessionId, waiting.taskId), apiError(404), 'by the owner\'s session');
  // Through a session of its own, on the same agent (shared with it): the task is not that session's.
  await s.invites.decide((await c.agents.shareLink(a.id)).token, true);
  const own = (await s.sessions.create({ agentId: a.id })) as { id: string };
  await assert.rejects(s.chat.cancelQueued(own.id, waiting.taskId), apiError(404), 'through its own session');

  const q = await c.sessions.queue(first.sessionId);
  assert.deepEqual(q.items.map((i: { taskId: string }) => i.taskId), [waiting.taskId], 'still waiting');
  assert.equal((await c.chat.cancelQueued(first.sessionId, waiting.taskId)).cancelled, true, 'the owner can');
  host.close();
});
