// A message for a host whose channel this node holds asks the presence store
// nothing: the channel knows the host's capacity and that it is reachable
// (each look-up is a Redis round trip per message on a cluster).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
let host: FakeHost | undefined;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  host?.close();
  await t.close();
});

test('send and dispatch to a host held here read no presence', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key);
  host = await connectFakeHost(t, credential, { capacity: 1 });
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'held', scope: 'private', hostId, engine: 'claude-code' });
  const sid = ((await c.sessions.create({ agentId: agent.id })) as SessionView).id;
  const g = t.hub.runFrames.gateway as unknown as { presence(id: string): Promise<unknown>; presenceMany(ids: string[]): Promise<unknown> };
  const asked: string[] = [];
  const [one, many] = [g.presence.bind(g), g.presenceMany.bind(g)];
  g.presence = (id) => (asked.push(id), one(id));
  g.presenceMany = (ids) => (asked.push(...ids), many(ids));
  const r = await c.sessions.send(sid, { content: 'hi' });
  assert.equal(r.status, 'processing');
  await host.next((f) => f.t === 'run.start', 5000);
  assert.deepEqual(asked, [], 'no presence look-up for a host held here');
});
