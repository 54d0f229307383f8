// a waiting message keeps the agent's binding as it was when the
// message was accepted. The task row copies the agent's host and work directory at accept
// (hub_accept), and the dispatch of a waiting message re-checks only whether its user may still use
// the agent and the mode ceiling (runFactsOf): it never compares the copy with the agent now. The
// owner narrows a shared agent's work directory (from the work root to a sandbox directory) or moves
// it to another host; a guest's messages already waiting still run where the owner no longer allows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';
import type { AcceptedRun } from '../src/client/index.js';

let t: TestHub;
const open: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

test("a guest's waiting message runs in the work directory the owner set at dispatch time, not the one it was accepted with", { timeout: 30_000 }, async () => {
  const owner = await t.user('binding-owner');
  const own = t.client(owner.key);
  const { hostId, credential } = await pairHost(t, owner.key);
  const h = await connectFakeHost(t, credential, { capacity: 4 });
  open.push(h);
  const agent = await agentWhenReady(own, { name: 'narrowed', scope: 'private', hostId, engine: 'claude-code', workDir: '' });
  const guest = t.client((await t.user('binding-guest')).key);
  await guest.invites.decide((await own.agents.shareLink(agent.id)).token, true);

  // The guest's first turn runs; its next message waits behind it.
  const first = (await guest.sessions.create({ agentId: agent.id, content: 'first' })) as AcceptedRun;
  await h.next((f) => f.t === 'run.start' && (f as any).runId === first.taskId, 10_000);
  const second = (await guest.sessions.send(first.sessionId, { content: 'second' })) as AcceptedRun;
  assert.equal(second.status, 'queued', 'waits behind the running turn');

  // The owner keeps guests out of the work root from now on.
  await own.agents.update(agent.id, { workDir: 'sandbox' });
  assert.equal((await own.agents.manage(agent.id)).workDir, 'sandbox');

  h.send({ t: 'run.end', runId: first.taskId, ok: true, usage: { inputTokens: 1, outputTokens: 1 } });
  // Either it runs in the new directory, or it is refused (ends without reaching the host): never in the old one.
  const start = await Promise.race([
    h.next((f) => f.t === 'run.start' && (f as any).runId === second.taskId, 10_000) as Promise<any>,
    eventually(async () => ((await guest.sessions.get(second.sessionId)).status === 'active' ? { refused: true } : undefined), 10_000, 50),
  ]);
  if (start.refused) return;
  assert.equal(start.workDir, 'sandbox', `the waiting message runs where the owner allows now (it ran in "${start.workDir}")`);
});
