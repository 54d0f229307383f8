// Last-Event-ID across nodes: a turn dispatched through node B runs on a host
// held by node A, so A numbers and keeps its events. A reader on B leaves
// mid-turn and comes back to B with Last-Event-ID: B asks the other nodes over
// the Bus (sessions/resume.ts) and replays what it missed before the live
// events, in order and without duplicates.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';
import { openSse } from './helpers/sse.js';
import type { SessionView } from '../src/client/index.js';

const skip = await clusterSkipReason();

const nodes = useCluster(skip, [{ nodeId: 'resume-a' }, { nodeId: 'resume-b' }]);
let host: FakeHost | undefined;
after(() => host?.close());

test('a reader resuming on another node than the host\'s gets the missed events, then the live ones', { skip, timeout: 60_000 }, async () => {
  const [a, b] = nodes.hubs;
  const u = await a.user();
  const { credential } = await pairHost(a, u.key);
  host = await connectFakeHost(a, credential, { capacity: 2 });
  const h = host;
  const agent = await agentWhenReady(a.client(u.key), { name: 'resume', scope: 'private', hostId: h.hostId, engine: 'claude-code' }, 10_000);
  const onB = b.client(u.key);
  const sid = ((await onB.sessions.create({ agentId: agent.id })) as SessionView).id; // no content: the 201 session
  const sent = await onB.sessions.send(sid, { content: 'stream' });
  assert.equal(sent.sessionId, sid);
  const start: any = await h.next((f) => f.t === 'run.start');
  const auth = { authorization: `Bearer ${u.key}` };

  const first = await openSse(`${b.url}/api/v1/sessions/${sid}/events`, { headers: auth });
  await first.until((f) => f.event === 'snapshot');
  h.send({ t: 'run.delta', runId: start.runId, text: 'one ' });
  h.send({ t: 'run.delta', runId: start.runId, text: 'two ' });
  const two = await first.until((f) => f.event === 'message.delta' && f.data.delta === 'two ');
  first.close();
  h.send({ t: 'run.delta', runId: start.runId, text: 'three ' });
  h.send({ t: 'run.delta', runId: start.runId, text: 'four ' });
  // Node A has numbered them once node B's readers could have seen them.
  await new Promise((r) => setTimeout(r, 200));

  const again = await openSse(`${b.url}/api/v1/sessions/${sid}/events`, { headers: { ...auth, 'last-event-id': two.id! } });
  const snap = await again.until((f) => f.event === 'snapshot');
  assert.equal(snap.data.resumed, true, 'node B could replay the turn');
  await again.until((f) => f.event === 'message.delta' && f.data.delta === 'four ');
  h.send({ t: 'run.delta', runId: start.runId, text: 'five' });
  h.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  await again.ended;
  const deltas = again.frames.filter((f) => f.event === 'message.delta').map((f) => f.data.delta);
  assert.deepEqual(deltas, ['three ', 'four ', 'five'], 'what was missed, then what is live, once each');
  assert.equal(again.frames.at(-1)!.event, 'run.completed');
  const ids = again.frames.filter((f) => f.id && f.event !== 'snapshot').map((f) => Number(f.id!.split(':')[1]));
  assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'event ids increase');
});
