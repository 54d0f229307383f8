// the model bindings' "known clean" set (src/model-configs/bindings.ts
// `clean`: hosts known to owe no settings, so an idle costs no read) is kept true only by the
// `model-bindings` Bus notices. It has no TTL, no periodic resync and no Bus-reconnect handler: a
// notice lost (Redis restarting; the edit made on the node that does not hold the host's channel)
// leaves the holder sure, for as long as the channel stays up, that the host owes nothing. The owner
// edited the configuration (a new key or endpoint, e.g. after a leak) while the host ran a turn; the
// host keeps the old key and URL through every later idle, its binding `pending` for good, until it
// happens to reconnect. Simulated on one node by dropping the notice, as Redis would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
const open: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ authCacheTtlMs: 1000 } as any);
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

test('a lost "host owes settings" notice is never made up for: the edited configuration never reaches the idle host', { timeout: 60_000 }, async () => {
  const u = await t.user('owed-owner');
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  const h = await connectFakeHost(t, credential, { capacity: 1 });
  open.push(h);
  const applies = () => h.frames.filter((f) => f.t === 'settings.apply') as any[];
  const agent = await agentWhenReady(c, { name: 'owed-settings', hostId, engine: 'claude-code' });
  const mc = await c.modelConfigs.create({ name: 'm', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-owed-clean-0000000000000', modelName: 'm1' });
  await c.hosts.applyModelConfig(hostId, mc.id);
  assert.equal(applies().length, 1, 'applied while idle');

  const turn = async (sessionId: string | undefined, i: number, end = true) => {
    const r = (sessionId ? await c.sessions.send(sessionId, { content: `job ${i}` }) : await c.sessions.create({ agentId: agent.id, content: `job ${i}` })) as AcceptedRun;
    await h.next((f) => f.t === 'run.start' && (f as any).runId === r.taskId, 10_000);
    const finish = async () => {
      h.send({ t: 'run.end', runId: r.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
      await eventually(async () => ((await c.sessions.get(r.sessionId)).status !== 'processing' ? true : undefined), 5000, 20);
    };
    if (end) await finish();
    return { sessionId: r.sessionId, finish };
  };
  // One turn and its idle: the node now knows the host owes nothing.
  const first = await turn(undefined, 0);
  await new Promise((r) => setTimeout(r, 300));

  // A turn runs; meanwhile the owner rotates the key. The notice to the holder of the channel is lost.
  const busy = await turn(first.sessionId, 1, false);
  // Presence counts the run (recounted shortly after a start): the edit finds the host busy and leaves it owed.
  await eventually(async () => ((await c.hosts.get(hostId)).running === 1 ? true : undefined), 5000, 20);
  const bus = t.hub.ctx.bus;
  const publish = bus.publish.bind(bus);
  let dropped = 0;
  bus.publish = (topic: string, payload: Uint8Array) => {
    if (topic.includes('model-bindings')) {
      dropped++;
      return;
    }
    return publish(topic, payload);
  };
  try {
    await c.modelConfigs.update(mc.id, { apiKey: 'sk-owed-clean-rotated-11111111' });
  } finally {
    bus.publish = publish;
  }
  assert.ok(dropped >= 1, 'the notice was published (and lost)');
  assert.equal(applies().length, 1, 'busy: nothing sent yet');

  // The turn ends, and more turns come and go, well past any cache TTL of the hub.
  await busy.finish();
  for (let i = 2; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 700));
    await turn(first.sessionId, i);
  }
  // The idle's settings write follows the last run's end (a read, then the frame): waited for, not timed.
  const sent = await eventually(async () => applies().length >= 2, 10_000, 20).catch(() => false);
  const binding = (await c.hosts.get(hostId)).modelConfig as { status?: string } | null;
  assert.ok(sent, `the host is sent the rotated configuration at an idle (applies: ${applies().length}, binding: ${binding?.status})`);
});
