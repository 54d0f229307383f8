// Audit by mutation (fifty-second session): while a channel's hello waits for the look-up of its host's open runs,
// two of ChannelRuns' guards had no test — removing either left the suite green.
// - The look-up answers for every hello of its batch at once; each channel takes only its own host's open runs.
//   A host of another account saying hello in the same batch as a reconnecting victim host, listing the victim's
//   run, must not be allowed to speak for it (inject text, end it early).
// - Run frames held meanwhile are bounded in bytes: past the bound the channel is closed (4430), not buffered on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hubWithHosts } from './helpers/hosts-hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { holdHelloLookUp } from './helpers/hello-lookup.js';
import type { ChannelRuns } from '../src/hosts/channel-runs.js';
import type { AcceptedRun } from '../src/client/index.js';
import { CloseCodes } from '../host-protocol/version.js';

const s = hubWithHosts();
const channelRuns = () => (s.t.hub.runFrames.gateway as unknown as { runs: ChannelRuns }).runs;

test('a host of another account in the same hello batch as the victim host does not get to speak for the victim\'s open run', { timeout: 30_000 }, async () => {
  const { t, hosts } = s;
  const victim = await t.user();
  const attacker = await t.user();
  const b = await pairHost(t, victim.key, 'victim');
  const a = await pairHost(t, attacker.key, 'attacker');
  const c = await pairHost(t, attacker.key, 'blocker');
  const b1 = await connectFakeHost(t, b.credential, { capacity: 1 });
  hosts.push(b1);
  const vc = t.client(victim.key);
  const agent = await eventually(() => vc.agents.create({ name: 'victim-agent', scope: 'private', hostId: b.hostId, engine: 'claude-code' }), 5000, 20);
  const started = b1.next((f: any) => f.t === 'run.start');
  const sid = ((await vc.sessions.create({ agentId: agent.id, content: 'hi' })) as AcceptedRun).sessionId;
  const runId = ((await started) as any).runId as string;

  const release = holdHelloLookUp(t);
  let b2: FakeHost;
  let ah: FakeHost;
  try {
    hosts.push(await connectFakeHost(t, c.credential, { capacity: 1 })); // its look-up is the one held
    // The victim's host reconnects with its run; the attacker's host says hello in the same batch, listing it too.
    [b2, ah] = await Promise.all([
      connectFakeHost(t, b.credential, { capacity: 1, running: [runId] }),
      connectFakeHost(t, a.credential, { capacity: 1, running: [runId] }),
    ]);
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

test('run frames held during the hello look-up are bounded in bytes: past the bound the channel is closed', { timeout: 30_000 }, async () => {
  const { t, hosts } = s;
  const user = await t.user();
  const h = await pairHost(t, user.key, 'holder');
  const runs = channelRuns() as unknown as { heldBytesMax: number };
  const bound = runs.heldBytesMax;
  runs.heldBytesMax = 512 * 1024; // the same rule at a size a test sends quickly
  const release = holdHelloLookUp(t);
  try {
    const host = await connectFakeHost(t, h.credential, { capacity: 1, running: ['r-held'] });
    hosts.push(host);
    const delta = { t: 'run.delta' as const, runId: 'r-held', text: 'x'.repeat(200 * 1024) };
    host.send(delta);
    host.send(delta);
    await host.ping(); // the hub read both frames: 400 KB held, under the bound, and the channel stays open
    assert.equal(host.ws.readyState, host.ws.OPEN);
    host.send(delta);
    const closed = await Promise.race([host.closed, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    assert.ok(closed, 'the channel holding more than the bound was not closed');
    assert.equal(closed.code, CloseCodes.FRAME_RATE.code);
  } finally {
    release();
    runs.heldBytesMax = bound;
  }
});
