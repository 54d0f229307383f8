// Apply/revert races across nodes (found by an audit).
//
// A background re-sync (`ModelBindings.deliverOwed`, src/model-configs/bindings.ts)
// reads the host's binding and its configuration id BEFORE it takes the host's
// settings lease, then sends that configuration under the lease without reading
// the binding again. When the owner reverted (or applies another configuration)
// through another node in between, the owner's write won the lease first and
// ended; the re-sync then took the lease and sent the stale configuration:
// the host's settings.json ended with the reverted configuration's URL and key
// while the hub reported the host on its default (modelConfig null), and the
// configuration could then be deleted with its key still live on the machine.
// The re-sync now reads the binding again under the lease.
//
// The window (a few database round trips) is widened here by holding node A's
// lease statement until node B's revert has finished. Needs REDIS_URL (two nodes
// in this process on one PostgreSQL and one Redis); skipped without it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster, clusterSkipReason } from './helpers/cluster.js';
import { wrapHubQueries } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import type { HubToHost } from '../host-protocol/frames.js';

const SECRET = 'audit-stale-delivery-secret-0123456789';
const KEY = 'sk-stale-delivery-0123456789ABCDEF';

const skip = await clusterSkipReason();
const nodes = useCluster(skip, [
  { nodeId: 'stale-a', secretKey: SECRET, rateLimitModelTestPerMinute: 0 } as any,
  { nodeId: 'stale-b', secretKey: SECRET, rateLimitModelTestPerMinute: 0 } as any,
]);
const open: FakeHost[] = [];
after(() => {
  for (const h of open) h.close();
});

const settingsFrames = (h: FakeHost) => h.frames.filter((f): f is Extract<HubToHost, { t: 'settings.apply' }> => f.t === 'settings.apply');

test('a re-sync that read the binding before a revert on another node must not re-apply the reverted configuration', { skip, timeout: 60_000 }, async () => {
  const [a, b] = nodes.hubs;
  const u = await a.user();
  const { hostId, credential } = await pairHost(a, u.key);
  const h = await connectFakeHost(a, credential); // the host's channel is on node A; settings.apply → ok
  open.push(h);
  const ca = a.client(u.key);
  const cb = b.client(u.key);

  const cfg = await ca.modelConfigs.create({ name: 'cfg', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: KEY, modelName: 'model-1' });
  const applied = await ca.hosts.applyModelConfig(hostId, cfg.id);
  assert.equal(applied.modelConfig?.status, 'idle');
  await eventually(async () => (await cb.hosts.get(hostId)).status !== 'offline', 10_000, 50);

  // Hold the next settings-lease statement for this host (node A's re-sync) until released.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const holding = new Promise<void>((r) => (held = r));
  let armed = true;
  const restore = wrapHubQueries(a.hub, (q, send) => {
    if (armed && /from hosts where id = .* for no key update/.test(q.text) && (q.text.includes(hostId) || q.values.includes(hostId))) {
      armed = false;
      held();
      return gate.then(() => send());
    }
    return send();
  });
  try {
    // An edit of the bound configuration: node A re-syncs the idle host in the background.
    await ca.modelConfigs.update(cfg.id, { modelName: 'model-2' });
    await holding; // node A has read the binding (config cfg) and is about to take the lease

    // Meanwhile the owner reverts the host to its default through node B: it succeeds.
    const reverted = await cb.hosts.applyModelConfig(hostId, null);
    assert.equal(reverted.modelConfig, null);
    const last = settingsFrames(h).at(-1)!;
    assert.equal(last.config, null, 'the host received the revert');
    const framesAfterRevert = settingsFrames(h).length;

    release();
    // Let node A's re-sync finish (it sends within a few round trips, if it sends at all).
    await eventually(async () => {
      const [r] = await a.hub.ctx.em().getConnection().execute(`select settings_until from hosts where id = ?`, [hostId]);
      return r.settings_until === null && settingsFrames(h).length >= framesAfterRevert;
    }, 10_000, 50);
    await new Promise((r) => setTimeout(r, 1500));
  } finally {
    release();
    restore();
  }

  // The hub says: default settings on this host.
  assert.equal((await ca.hosts.get(hostId)).modelConfig ?? null, null, 'the hub reports the host on its default');
  // The host must agree: the last settings command it received is the revert, not the configuration again.
  const final = settingsFrames(h).at(-1)!;
  assert.equal(
    final.config,
    null,
    `after the revert the host was sent the reverted configuration again (${JSON.stringify(final.config && { baseUrl: final.config.baseUrl, model: final.config.model })}): ` +
      'its settings.json now holds that endpoint and key while the hub reports it on its default',
  );
});
