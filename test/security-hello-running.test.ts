// Audit (hostile host, forty-fifth session): Scheduler.hostsUp judged lost runs against the union of the `running` lists of
// every hello in its batch. A host of another account that says hello in the same batch as a victim host,
// listing the victim's run id, keeps that run `running` although the victim reconnected without it:
// the run is never ended (HOST_DISCONNECTED), the session stays `processing` and the slot of the victim
// host's capacity stays taken (reconcile does not resend it: the victim's channel "carries" it).
// Each host's runs are now judged against its own hello only.
// Audit by mutation (fifty-second session): the look-up answers for every hello of its batch at once, and each
// channel takes only its own host's open runs; dropping that filter left the suite green. The last test has the
// victim's host reconnect with its run while the attacker's host, in the same batch, speaks for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import { holdHelloLookUp } from './helpers/hello-lookup.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

/** A victim's host running one run of its private agent, and the hosts of another account (`a`, and `c` to hold the look-up). */
async function victimRun() {
  const victim = await t.user();
  const attacker = await t.user();
  const b = await pairHost(t, victim.key, 'victim');
  const a = await pairHost(t, attacker.key, 'attacker');
  const c = await pairHost(t, attacker.key, 'blocker');
  const b1 = await connectFakeHost(t, b.credential, { capacity: 1 });
  hosts.push(b1);
  const vc = t.client(victim.key);
  const agent = await agentWhenReady(vc, { name: 'victim-agent', scope: 'private', hostId: b.hostId, engine: 'claude-code' });
  const started = b1.next((f: any) => f.t === 'run.start');
  const sid = ((await vc.sessions.create({ agentId: agent.id, content: 'hi' })) as AcceptedRun).sessionId;
  const runId = ((await started) as any).runId as string;
  return { a, b, c, sid, runId };
}

async function scenario(attackerLists: boolean): Promise<string> {
  const { a, b, c, runId } = await victimRun();
  // Hold the hello look-up so that the next hellos are looked up together (as in any reconnect burst).
  const release = holdHelloLookUp(t);
  try {
    hosts.push(await connectFakeHost(t, c.credential, { capacity: 1 })); // its look-up is in flight
    // The victim's host restarted: a new channel (the old one is replaced, no host-down) without the run.
    // The attacker's host says hello at the same time, listing the victim's run id.
    const [b2, ah] = await Promise.all([
      connectFakeHost(t, b.credential, { capacity: 1, running: [] }),
      connectFakeHost(t, a.credential, { capacity: 1, running: attackerLists ? [runId] : [] }),
    ]);
    hosts.push(b2, ah);
  } finally {
    release();
  }
  const knex = t.hub.ctx.orm.em.getConnection().getKnex();
  const read = async () => ((await knex.raw('select status, error_code from session_tasks where id = ?', [runId])) as any).rows[0];
  // LOST_RUN_GRACE_MS (3 s) and the end's write, however late they come; a run still kept after 15 s is what the assertions report.
  await eventually(async () => (await read()).status !== 'running' || undefined, 15_000, 50).catch(() => {});
  const row = await read();
  return `${row.status}/${row.error_code}`;
}

test('control: the victim host reconnecting without its run → the run is ended HOST_DISCONNECTED', { timeout: 30_000 }, async () => {
  assert.match(await scenario(false), /^failed\/HOST_DISCONNECTED$/);
});

test('another account\'s host listing the victim\'s run id in its hello.running does not keep the victim\'s lost run alive', { timeout: 30_000 }, async () => {
  assert.match(await scenario(true), /^failed\/HOST_DISCONNECTED$/, 'the lost run of the victim host was kept running by another host\'s hello');
});

test('an attacker\'s host in the same hello batch as the victim host reconnecting with its run cannot speak for that run', { timeout: 30_000 }, async () => {
  const { a, b, c, sid, runId } = await victimRun();
  const release = holdHelloLookUp(t);
  let b2: FakeHost;
  try {
    hosts.push(await connectFakeHost(t, c.credential, { capacity: 1 })); // its look-up is the one held
    // The victim's host reconnects with its run; the attacker's host says hello in the same batch, listing it too.
    const [victimHost, ah] = await Promise.all([
      connectFakeHost(t, b.credential, { capacity: 1, running: [runId] }),
      connectFakeHost(t, a.credential, { capacity: 1, running: [runId] }),
    ]);
    b2 = victimHost;
    hosts.push(b2, ah);
    const dropped = t.hub.runFrames.gateway.droppedRunFrames;
    ah.send({ t: 'run.delta', runId, text: 'INJECTED' });
    ah.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 999_999, outputTokens: 999_999 } });
    release();
    await eventually(async () => t.hub.runFrames.gateway.droppedRunFrames >= dropped + 2, 10_000, 20).catch(() => {
      assert.fail('the attacker\'s frames for the victim\'s run were not dropped');
    });
  } finally {
    release();
  }

  const db = t.hub.ctx.em().getConnection();
  const status = async () => (await db.execute(`select status from session_tasks where id = ?`, [runId]))[0].status as string;
  assert.equal(await status(), 'running', 'another account\'s host ended the victim\'s run');
  // The victim's own channel still speaks for it.
  b2.send({ t: 'run.message', runId, role: 'assistant', blocks: [{ kind: 'text', content: 'real answer' }] });
  b2.send({ t: 'run.end', runId, ok: true, usage: { inputTokens: 1, outputTokens: 2 } });
  await eventually(async () => (await status()) === 'completed' || undefined, 10_000, 25);
  const texts = (await db.execute(`select content from session_messages where session_id = ? and role = 'assistant'`, [sid])).map((r: any) => r.content as string);
  assert.deepEqual(texts, ['real answer']);
  const usage = (await db.execute(`select input_tokens, output_tokens from session_tasks where id = ?`, [runId]))[0];
  assert.deepEqual([Number(usage.input_tokens), Number(usage.output_tokens)], [1, 2]);
});
