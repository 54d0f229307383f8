// Deleting a session mid-run must not make the run free: after an abort, the usage the host reports
// when its engine is gone is charged (run-end.ts lateEnd); a delete took the run's row with the
// session at once, so the host's report found nothing to charge. A guest could read the whole
// streamed answer, delete the session, and pay nothing. The delete now waits (within
// ENGINE_STOP_GRACE_MS) for the host to report the engine gone, as an agent's deletion does.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady } from './helpers/host.js';
import type { AcceptedRun, SessionView } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 10_000, ownerShare: 0.2, engineStopGraceMs: 3000 } as any);
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;
function accepted(r: SessionView | AcceptedRun): AcceptedRun {
  assert.ok('taskId' in r, `a run accepted, got ${JSON.stringify(r)}`);
  return r;
}

async function paidAgent(name: string) {
  const owner = await t.user();
  const { hostId, credential } = await pairHost(t, owner.key);
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  const a = await agentWhenReady(t.client(owner.key), { name, scope: 'public', pay: 'paid', step: 'submit', hostId, engine: 'claude-code', workDir: '' });
  await t.admin.admin.approveAgent(a.id);
  return { owner, host, agentId: a.id };
}

for (const abortFirst of [false, true]) {
  test(`a guest who deletes the session mid-run${abortFirst ? ' (just after an abort)' : ''} is charged what the host reports for the run`, async () => {
    const { owner, host, agentId } = await paidAgent(abortFirst ? 'abort-then-delete' : 'delete-to-skip-pay');
    const guest = await t.user();
    const g = t.client(guest.key);
    const r = accepted(await g.sessions.create({ agentId, content: 'a long, expensive job' }));
    await host.next((f) => f.t === 'run.start' && (f as any).runId === r.taskId);
    host.send({ t: 'run.message', runId: r.taskId, role: 'assistant', blocks: [{ kind: 'text', content: 'the whole valuable answer' }] });
    await eventually(async () => ((await g.sessions.messages(r.sessionId)).items.some((m: any) => m.role === 'assistant') ? true : undefined), 5000, 20);
    if (abortFirst) await g.sessions.abort(r.sessionId);
    const removing = g.sessions.remove(r.sessionId);
    await host.next((f) => f.t === 'run.abort' && (f as any).runId === r.taskId);
    // The host stops the engine (a moment: SIGINT, the engine's exit) and reports what the turn used.
    await new Promise((res) => setTimeout(res, 300));
    host.send({ t: 'run.end', runId: r.taskId, ok: false, aborted: true, usage: { inputTokens: 3000, outputTokens: 1000 } });
    assert.deepEqual(await removing, { deleted: true });
    await assert.rejects(g.sessions.get(r.sessionId), (e: any) => e.status === 404);
    assert.equal(await balance(guest.key), 10_000 - 5000, 'the guest pays for the run it used');
    assert.equal(await balance(owner.key), 10_000 + 1000, 'and the owner of the paid agent earns its share');
    host.close();
  });
}

test('a host that never reports the engine gone holds a delete up for ENGINE_STOP_GRACE_MS at most', async () => {
  const { host, agentId } = await paidAgent('silent-host');
  const g = t.client((await t.user()).key);
  const r = accepted(await g.sessions.create({ agentId, content: 'job' }));
  await host.next((f) => f.t === 'run.start' && (f as any).runId === r.taskId);
  const t0 = Date.now();
  assert.deepEqual(await g.sessions.remove(r.sessionId), { deleted: true });
  assert.ok(Date.now() - t0 < 6000, `deleted in ${Date.now() - t0} ms`);
  host.close();
});
