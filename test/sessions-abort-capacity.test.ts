// An abort ends the turn for its session at once, but the engine on the owner's machine stops only
// when its host says so (SIGINT, then SIGKILL after its grace): until the host's run.end, or a bound,
// the aborted run still holds its slot of the host's capacity. Before, the slot came back at the
// abort, so a guest looping send/abort on a capacity-1 host had several engines running there at once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ engineStopGraceMs: 1500 } as any);
});
after(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r, `a run accepted, got ${JSON.stringify(r)}`);
  return r;
}
const started = (host: FakeHost, ids: string[]) => ids.filter((id) => host.frames.some((f) => f.t === 'run.start' && (f as any).runId === id));

async function ownerWithAgent(name: string) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await agentWhenReady(t.client(owner.key), { name, scope: 'public', step: 'submit', hostId, engine: 'claude-code', workDir: '' });
  await t.admin.admin.approveAgent(a.id);
  return { host, agentId: a.id };
}

test("send/abort loops on a capacity-1 host: the next run starts only once the host reports the aborted engine gone", async () => {
  const { host, agentId } = await ownerWithAgent('abort-capacity');
  const g = t.client((await t.user()).key);
  // The grace out of reach for this test: only the host's report may free the slot, however slowly the loop runs.
  const grace = t.hub.ctx.config.engineStopGraceMs;
  t.hub.ctx.config.engineStopGraceMs = 10 * 60_000;
  const ids: string[] = [];
  let sessionId = '';
  try {
    const run = accepted(await g.sessions.create({ agentId, content: 'job 1' }));
    sessionId = run.sessionId;
    await host.next((f) => f.t === 'run.start' && (f as any).runId === run.taskId);
    ids.push(run.taskId);
    for (let i = 2; i <= 4; i++) {
      await g.sessions.abort(sessionId);
      ids.push((await g.sessions.send(sessionId, { content: `job ${i}` })).taskId);
    }
  } finally {
    t.hub.ctx.config.engineStopGraceMs = grace;
  }
  const [first] = ids;
  await sleep(400);
  assert.deepEqual(started(host, ids), [first], 'one engine at a time on a capacity-1 host');
  // What the database holds decides, not what reached the host by now: no second run, the last message waiting.
  const rows = await t.hub.ctx.em().getConnection().execute(`select id, status from session_tasks where id = any(string_to_array(?, ','))`, [ids.slice(1).join(',')]);
  assert.deepEqual(rows.map((r: any) => [r.id, r.status]), [[ids[3], 'queued']], 'the two messages the aborts discarded are gone; the last one waits');
  assert.equal((await g.sessions.get(sessionId)).status, 'queued', 'the last message waits (host_capacity)');

  // The host reports the first engine gone: the newest message starts (the others were discarded by the aborts).
  host.send({ t: 'run.end', runId: first, ok: false, aborted: true });
  await host.next((f) => f.t === 'run.start' && (f as any).runId === ids[3]);
  assert.deepEqual(started(host, ids), [first, ids[3]]);
  host.close();
});

test('a host that never reports the aborted engine gone gets its slot back after ENGINE_STOP_GRACE_MS', async () => {
  const { host, agentId } = await ownerWithAgent('abort-silent');
  const g = t.client((await t.user()).key);
  const first = accepted(await g.sessions.create({ agentId, content: 'job 1' }));
  await host.next((f) => f.t === 'run.start' && (f as any).runId === first.taskId);
  // Before the abort: the grace starts when the hub takes it, so however long these two calls take, the bound holds.
  const t0 = Date.now();
  await g.sessions.abort(first.sessionId);
  const next = await g.sessions.send(first.sessionId, { content: 'job 2' });
  assert.equal(next.status, 'queued');
  await host.next((f) => f.t === 'run.start' && (f as any).runId === next.taskId, 6000);
  assert.ok(Date.now() - t0 >= 900, 'not before the grace');
  host.close();
});
