// Messages waiting for a host that is then deleted could never run, yet their session read `queued`
// and refused new messages (queue full) for good. Deleting a host now ends its waiting messages as
// failed (HOST_DELETED), so their sessions are usable again (on the agent's next host).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(() => t.close());

test('a deleted host leaves no session waiting for ever: its waiting messages fail, the session takes work again after a rebind', async () => {
  const owner = await t.user();
  const oc = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await agentWhenReady(oc, { name: 'host-deleted', scope: 'public', step: 'submit', hostId, engine: 'claude-code', workDir: '' });
  await t.admin.admin.approveAgent(a.id);
  const g = t.client((await t.user()).key);
  const first = (await g.sessions.create({ agentId: a.id, content: 'running' })) as SessionView | AcceptedRun;
  assert.ok('taskId' in first);
  await host.next((f) => f.t === 'run.start' && (f as any).runId === first.taskId);
  for (let i = 0; i < 10; i++) assert.equal((await g.sessions.send(first.sessionId, { content: `waiting ${i}` })).status, 'queued');

  await oc.hosts.remove(hostId);
  await host.closed;
  await eventually(async () => ((await g.sessions.queue(first.sessionId)).total === 0 ? true : undefined), 5000, 50);
  assert.notEqual((await g.sessions.get(first.sessionId)).status, 'queued', 'no message waits for the deleted host');

  // The owner pairs a new machine and binds the agent to it: the guest's session takes messages again.
  const next = await pairHost(t, owner.key);
  const host2 = await connectFakeHost(t, next.credential, { capacity: 1 });
  await eventually(() => oc.agents.update(a.id, { hostId: next.hostId, engine: 'claude-code' }).catch(() => undefined), 5000, 20);
  await t.admin.admin.approveAgent(a.id).catch(() => undefined);
  const after = await g.sessions.send(first.sessionId, { content: 'after the rebind' }).catch((e) => e);
  assert.ok(!(after instanceof Error), `a new message is accepted: ${after?.message ?? ''}`);
  host2.close();
});
