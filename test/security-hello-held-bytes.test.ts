// Audit by mutation (fifty-second session): while a channel's hello waits for the look-up of its host's open
// runs, the run frames it sends are held, bounded in bytes: past the bound the channel is closed (4430), not
// buffered on. Removing the bound left the suite green.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hubWithHosts } from './helpers/hosts-hub.js';
import { pairHost, connectFakeHost } from './helpers/host.js';
import { holdHelloLookUp } from './helpers/hello-lookup.js';
import type { ChannelRuns } from '../src/hosts/channel-runs.js';
import { CloseCodes } from '../host-protocol/version.js';

const s = hubWithHosts();
const channelRuns = () => (s.t.hub.runFrames.gateway as unknown as { runs: ChannelRuns }).runs;

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
    const closed = await Promise.race([host.closed, new Promise<null>((r) => setTimeout(() => r(null), 10_000).unref())]);
    assert.ok(closed, 'the channel holding more than the bound was not closed');
    assert.equal(closed.code, CloseCodes.FRAME_RATE.code);
  } finally {
    release();
    runs.heldBytesMax = bound;
  }
});
