// Audit (hostile host, forty-fifth session): Scheduler.hostsUp judged lost runs against the union of the `running` lists of
// every hello in its batch. A host of another account that says hello in the same batch as a victim host,
// listing the victim's run id, keeps that run `running` although the victim reconnected without it:
// the run is never ended (HOST_DISCONNECTED), the session stays `processing` and the slot of the victim
// host's capacity stays taken (reconcile does not resend it: the victim's channel "carries" it).
// Each host's runs are now judged against its own hello only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { holdHelloLookUp } from './helpers/hello-lookup.js';
import type { SessionView } from '../src/client/index.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

async function scenario(attackerLists: boolean): Promise<string> {
  const victim = await t.user();
  const attacker = await t.user();
  const b = await pairHost(t, victim.key, 'victim');
  const a = await pairHost(t, attacker.key, 'attacker');
  const c = await pairHost(t, attacker.key, 'blocker');
  const b1 = await connectFakeHost(t, b.credential, { capacity: 1 });
  hosts.push(b1);
  const vc = t.client(victim.key);
  const agent = await eventually(() => vc.agents.create({ name: 'victim-agent', scope: 'private', hostId: b.hostId, engine: 'claude-code' }), 5000, 20);
  const sid = ((await vc.sessions.create({ agentId: agent.id })) as SessionView).id;
  const started = b1.next((f: any) => f.t === 'run.start');
  await vc.sessions.send(sid, { content: 'hi' });
  const runId = ((await started) as any).runId as string;

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
