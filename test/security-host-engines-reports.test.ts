// Audit (hostile host, forty-fifth session): an `engines` frame was written to the hosts table with one
// UPDATE of its own (HostStore.recordEngines outside a pending hello), not batched like hellos and
// last-seen times, and patched into presence each time. A host holding its credential sent them at its
// frame rate: every frame a statement and a new row version of ~KBs of JSON, queued on the node's pool
// ahead of everyone's accepts and run ends. Now an unchanged list is dropped, a host reports at most
// ENGINE_REPORTS_PER_MINUTE lists, and the table is written by the periodic flush, the latest list only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, wrapHubQueries, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, type FakeHost } from './helpers/host.js';
import { ENGINE_REPORTS_PER_MINUTE } from '../src/hosts/engine-lists.js';
import type { Presence } from '../src/hosts/presence.js';

let t: TestHub;
const hosts: FakeHost[] = [];
before(async () => {
  t = await startTestHub();
});
after(async () => {
  for (const h of hosts) h.close();
  await t?.close();
});

test('a burst of engines frames costs a bounded number of row writes (batched), not one per frame', async () => {
  const u = await t.user();
  const { credential } = await pairHost(t, u.key, 'flood');
  const host = await connectFakeHost(t, credential, { capacity: 1 });
  hosts.push(host);
  await new Promise((r) => setTimeout(r, 1200)); // the hello's own batched write is done
  let engineWrites = 0;
  const restore = wrapHubQueries(t.hub, (q, send) => {
    if (/update hosts\b[\s\S]*\bengines\b/i.test(q.text)) engineWrites++;
    return send();
  });
  // Each list taken is also a presence write (Redis, or this node's map).
  const presence = (t.hub.runFrames.gateway as unknown as { presenceStore: Presence }).presenceStore;
  const patch = presence.patch.bind(presence);
  let enginePatches = 0;
  presence.patch = ((id, p) => {
    if ('engines' in p) enginePatches++;
    return patch(id, p);
  }) as Presence['patch'];
  try {
    const N = 1000;
    const big = Array.from({ length: 50 }, (_, i) => ({ id: `e${i}`, displayName: 'x'.repeat(120), version: 'y'.repeat(120) }));
    for (let i = 0; i < N; i++) host.send({ t: 'engines', engines: big.map((e, j) => (j === 0 ? { ...e, version: String(i) } : e)) });
    await host.ping();
    await new Promise((r) => setTimeout(r, 1500)); // past a store flush (1 s)
    assert.equal(host.ws.readyState, host.ws.OPEN, 'within the frame rate: the channel stays up');
    assert.ok(engineWrites <= 5, `${N} engines frames made ${engineWrites} UPDATE statements on the hosts row (expected a few batched writes)`);
    assert.ok(enginePatches <= ENGINE_REPORTS_PER_MINUTE, `${N} engines frames made ${enginePatches} presence writes (at most ${ENGINE_REPORTS_PER_MINUTE} a minute)`);
  } finally {
    delete (presence as { patch?: unknown }).patch; // the prototype's again
    restore();
  }
});
