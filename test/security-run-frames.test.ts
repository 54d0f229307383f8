// Issue 10, hole 2: run frames are bound to the host the run was dispatched
// to. A paired host of another user (a real credential, a raw protocol
// client) sends run.init / run.delta / run.message / run.end for a run on
// someone else's host: nothing is injected, the run does not end, usage and
// the agent's model are not forged, and a capacity-1 host is not
// double-booked. On one node (both databases) and across two nodes + Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

const hosts: FakeHost[] = [];
after(() => {
  for (const h of hosts) h.close();
});

const settle = () => new Promise((r) => setTimeout(r, 600));
/** A session started with its first message: the plain 202 of its run. */
async function started(p: Promise<SessionView | AcceptedRun>): Promise<AcceptedRun> {
  const r = (await p) as AcceptedRun;
  assert.ok(r.sessionId && r.taskId, 'a 202 with the run');
  return r;
}

/** The victim's run on host A (via hub `va`), the attacker's host B on hub `vb`: every forged frame is dropped. */
async function forgedFramesAreDropped(va: TestHub, vb: TestHub): Promise<void> {
  const victim = await va.user();
  const attacker = await vb.user();
  const a = await pairHost(va, victim.key, 'victim-host');
  const b = await pairHost(vb, attacker.key, 'attacker-host');
  const hostA = await connectFakeHost(va, a.credential, { capacity: 1 });
  const hostB = await connectFakeHost(vb, b.credential, { capacity: 1 });
  hosts.push(hostA, hostB);
  const vc = va.client(victim.key);
  const agent = await agentWhenReady(vc, { name: 'victim-agent', hostId: a.hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const sid = (await started(vc.sessions.create({ agentId: agent.id, content: 'turn one' }))).sessionId;
  const start: any = await hostA.next((f) => f.t === 'run.start');
  const runId = start.runId as string;
  hostA.send({ t: 'run.init', runId, model: 'real-model' });
  hostA.send({ t: 'run.delta', runId, text: 'real ' });

  // The attacker's host speaks for the victim's run.
  hostB.send({ t: 'run.init', runId, model: 'forged-model' });
  hostB.send({ t: 'run.delta', runId, text: 'INJECTED DELTA' });
  hostB.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: 'INJECTED MESSAGE' }] });
  hostB.send({ t: 'run.end', runId, ok: true, model: 'forged-model', usage: { inputTokens: 999_999, outputTokens: 999_999 } });
  await settle();

  const db = va.hub.ctx.em().getConnection();
  const task = (await db.execute(`select status, input_tokens, output_tokens, model from session_tasks where id = ?`, [runId]))[0];
  assert.equal(task.status, 'running', 'a foreign run.end must not end the run');
  assert.equal((await vc.sessions.get(sid)).status, 'processing');

  // A second message waits: the host has capacity 1 and its run still runs.
  await started(vc.sessions.send(sid, { content: 'turn two' }));
  await started(vc.sessions.create({ agentId: agent.id, content: 'other session' }));
  await settle();
  assert.equal(hostA.frames.filter((f) => f.t === 'run.start').length, 1, 'the capacity-1 host must not be double-booked');

  // The real host ends its run: its own model and usage are what is stored.
  hostA.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: 'real answer' }] });
  hostA.send({ t: 'run.end', runId, ok: true, model: 'real-model', usage: { inputTokens: 3, outputTokens: 4 } });
  await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [runId]))[0].status === 'completed', 10_000, 25);
  const done = (await db.execute(`select input_tokens, output_tokens, model from session_tasks where id = ?`, [runId]))[0];
  assert.equal(Number(done.input_tokens), 3);
  assert.equal(Number(done.output_tokens), 4);
  assert.equal(done.model, 'real-model');
  const texts = (await db.execute(`select content from session_messages where session_id = ? and role = 'assistant'`, [sid])).map((r: any) => r.content as string);
  assert.deepEqual(texts, ['real answer']);
  assert.ok(!texts.some((x) => x.includes('INJECTED')));
  assert.equal((await vc.market.get(agent.id)).modelName, 'real-model');
  // Now, and only now, the next run starts.
  await hostA.next((f) => f.t === 'run.start' && (f as any).runId !== runId);
}

let t: TestHub;
before(async () => {
  t = await startTestHub();
});
after(async () => {
  await t?.close();
});

test('frames for another host\'s run are dropped: no injection, no early end, no forged usage or model, no double booking', async () => {
  await forgedFramesAreDropped(t, t);
});

const skip = await clusterSkipReason();
const nodes = useCluster(skip, [{ nodeId: 'frames-a' }, { nodeId: 'frames-b' }]);

test('two nodes: an attacker\'s host on the other node cannot speak for the run either', { skip, timeout: 60_000 }, async () => {
  const [a, b] = nodes.hubs;
  await forgedFramesAreDropped(a, b);
});

test('after a reconnect the host speaks for its open runs (looked up once), another host still cannot', async () => {
  const victim = await t.user();
  const attacker = await t.user();
  const a = await pairHost(t, victim.key, 'victim-reconnects');
  const b = await pairHost(t, attacker.key, 'attacker-2');
  const first = await connectFakeHost(t, a.credential, { capacity: 1 });
  const hostB = await connectFakeHost(t, b.credential, { capacity: 1 });
  hosts.push(first, hostB);
  const vc = t.client(victim.key);
  const agent = await agentWhenReady(vc, { name: 'reconnecting', hostId: a.hostId, engine: 'claude-code', workDir: 'w' }, 10_000);
  const c = await started(vc.sessions.create({ agentId: agent.id, content: 'long turn' }));
  const start: any = await first.next((f) => f.t === 'run.start');
  // A new channel of the same host takes over (the old one is REPLACED, the run goes on).
  const second = await connectFakeHost(t, a.credential, { capacity: 1, running: [start.runId] });
  hosts.push(second);
  assert.equal((await first.closed).code, 4409);
  hostB.send({ t: 'run.end', runId: start.runId, ok: false, error: { code: 'X', message: 'forged' } });
  second.send({ t: 'run.message', runId: start.runId, role: 'assistant', blocks: [{ kind: 'text', content: 'from the new channel' }] });
  second.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 2, outputTokens: 2 } });
  const db = t.hub.ctx.em().getConnection();
  await eventually(async () => (await db.execute(`select status from session_tasks where id = ?`, [start.runId]))[0].status === 'completed', 10_000, 25);
  const texts = (await db.execute(`select content from session_messages where session_id = ? and role = 'assistant'`, [c.sessionId])).map((r: any) => r.content);
  assert.deepEqual(texts, ['from the new channel']);
});

test('a run\'s own host ends it once: a second run.end on the same channel records and charges nothing', async () => {
  const u = await t.user();
  const { hostId, credential } = await pairHost(t, u.key, 'ends-twice');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  const c = t.client(u.key);
  const agent = await agentWhenReady(c, { name: 'ends-twice', scope: 'private', hostId, engine: 'claude-code' }, 10_000);
  const sid = (await started(c.sessions.create({ agentId: agent.id, content: 'one turn' }))).sessionId;
  const start: any = await host.next((f) => f.t === 'run.start');
  const db = t.hub.ctx.em().getConnection();
  const charges = async () => (await db.execute(`select amount from ledger_entries where ref = ? and type = 'spend'`, [start.runId])).map((r: any) => Number(r.amount));
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 10, outputTokens: 10 } });
  await eventually(async () => (await charges()).length === 1 || undefined, 10_000, 25);
  assert.equal((await c.sessions.get(sid)).status, 'active');
  // The same host, on the same channel, ends it again with a larger usage (the protocol says once per run).
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: 50_000, outputTokens: 50_000 } });
  await settle();
  const task = (await db.execute(`select status, input_tokens, output_tokens from session_tasks where id = ?`, [start.runId]))[0];
  assert.equal(task.status, 'completed');
  assert.deepEqual([Number(task.input_tokens), Number(task.output_tokens)], [10, 10], 'the first end\'s usage stands');
  assert.deepEqual(await charges(), [-30], 'charged once, for the first end');
});
