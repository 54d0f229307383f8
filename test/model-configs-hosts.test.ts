// Apply, revert and re-sync of model configurations on hosts, over the real
// host channel (WebSocket + MessagePack) with an in-test protocol client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import type { HostBinding, NewModelConfig } from '../src/client/index.js';
import type { HubToHost } from '../host-protocol/frames.js';
import { apiError } from './helpers/api-error.js';

const KEY = 'sk-host-test-0123456789ABCDEF';
let t: TestHub;
let u: { id: string; key: string };
const open: FakeHost[] = [];

before(async () => {
  // A 3 s heartbeat window makes a silent host read "too old" after 3 s.
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000, rateLimitModelTestPerMinute: 0 } as any);
  u = await t.user();
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

async function host(opts: Parameters<typeof connectFakeHost>[2] = {}, cred?: { hostId: string; credential: string }) {
  const c = cred ?? (await pairHost(t, u.key));
  const h = await connectFakeHost(t, c.credential, opts);
  open.push(h);
  return { ...c, h };
}
const config = (over: Partial<NewModelConfig> = {}, token = u.key) =>
  t.client(token).modelConfigs.create({ name: 'cfg', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: KEY, modelName: 'model-1', ...over });
const applyTo = (hostId: string, configId: string | null, token = u.key) => t.client(token).hosts.applyModelConfig(hostId, configId);
const settingsFrames = (h: FakeHost) => h.frames.filter((f): f is Extract<HubToHost, { t: 'settings.apply' }> => f.t === 'settings.apply');
/** The host as listed, its binding typed (the host view leaves `modelConfig` to the model-configs domain). */
async function hostView(hostId: string) {
  const h = (await t.client(u.key).hosts.list()).items.find((x) => x.id === hostId)!;
  return { ...h, modelConfig: h.modelConfig as HostBinding | null };
}
const mc = () => t.client(u.key).modelConfigs;

test('apply: the host receives the decrypted settings; binding idle; hostCount 1; delete → 409; revert → null', async () => {
  const { hostId, h } = await host();
  const c = await config();
  assert.equal((await hostView(hostId)).modelConfig, null, 'default before any apply');

  const r = await applyTo(hostId, c.id);
  assert.deepEqual(r, { hostId, modelConfig: { configId: c.id, name: 'cfg', status: 'idle', lastError: null } });
  const [f] = settingsFrames(h);
  assert.deepEqual({ engine: f.engine, config: f.config }, { engine: 'claude-code', config: { baseUrl: 'https://llm.example', authMode: 'bearer', apiKey: KEY, model: 'model-1' } });
  assert.ok(!JSON.stringify(r).includes(KEY));

  assert.deepEqual((await hostView(hostId)).modelConfig, { configId: c.id, name: 'cfg', status: 'idle', lastError: null });
  assert.equal((await mc().get(c.id)).hostCount, 1);
  const list = await mc().list();
  assert.equal(list.items.find((x) => x.id === c.id)!.hostCount, 1);

  await assert.rejects(mc().remove(c.id), apiError(409, '4098'));

  const rev = await applyTo(hostId, null);
  assert.deepEqual(rev, { hostId, modelConfig: null });
  assert.equal(settingsFrames(h).at(-1)!.config, null);
  assert.equal((await hostView(hostId)).modelConfig, null);
  assert.equal((await mc().get(c.id)).hostCount, 0);
  assert.deepEqual(await mc().remove(c.id), { deleted: true });
});

test("another account's host or configuration → 404", async () => {
  const { hostId } = await host();
  const other = await t.user();
  const theirs = await config({}, other.key);
  await assert.rejects(applyTo(hostId, theirs.id), apiError(404));
  const mine = await config();
  await assert.rejects(applyTo(hostId, mine.id, other.key), apiError(404));
  await assert.rejects(applyTo(hostId, null, other.key), apiError(404));
});

test('the host fails to write its settings → binding failed with lastError; retried when it comes back', async () => {
  let refuse = true;
  const answer = (f: HubToHost & { id: number }) =>
    f.t === 'settings.apply' ? (refuse ? { t: 'reply' as const, id: f.id, ok: false, error: 'EACCES: settings.json is read-only' } : { t: 'reply' as const, id: f.id, ok: true, data: { applied: true } }) : undefined;
  const first = await host({ answer });
  const c = await config({ name: 'flaky' });
  const r = await applyTo(first.hostId, c.id);
  assert.equal(r.modelConfig?.status, 'failed');
  assert.match(r.modelConfig?.lastError ?? '', /read-only/);
  assert.equal((await hostView(first.hostId)).modelConfig?.status, 'failed');

  first.h.close();
  await first.h.closed;
  refuse = false;
  const again = await host({ answer }, first);
  const v = await eventually(async () => {
    const m = (await hostView(first.hostId)).modelConfig;
    return m?.status === 'idle' && m;
  });
  assert.equal(v.lastError, null);
  assert.equal(settingsFrames(again.h).length, 1, 'delivered on hello');
});

test('a host that never answers the settings command → 409 (too old), nothing bound', async () => {
  const { hostId } = await host({ answer: () => undefined });
  const c = await config();
  await assert.rejects(applyTo(hostId, c.id), apiError(409, '4096'));
  assert.equal((await hostView(hostId)).modelConfig, null);
  assert.equal((await mc().get(c.id)).hostCount, 0);
});

test('offline host → 409 on apply and on revert', async () => {
  const { hostId, h } = await host();
  h.close();
  await h.closed;
  const c = await config();
  await eventually(async () => (await hostView(hostId)).status === 'offline');
  await assert.rejects(applyTo(hostId, c.id), apiError(409, '4094'));
  await assert.rejects(applyTo(hostId, null), apiError(409));
});

test('edit re-syncs: an idle host at once; an offline host goes pending and gets only the latest on return', async () => {
  const a = await host();
  const b = await host();
  const c = await config({ name: 'shared' });
  await applyTo(a.hostId, c.id);
  await applyTo(b.hostId, c.id);
  assert.equal((await mc().get(c.id)).hostCount, 2);

  b.h.close();
  await b.h.closed;
  await eventually(async () => (await hostView(b.hostId)).status === 'offline');

  const p1 = await mc().update(c.id, { modelName: 'model-2' });
  assert.equal(p1.hostCount, 2);
  await eventually(async () => settingsFrames(a.h).some((f) => f.config?.model === 'model-2'));
  await eventually(async () => (await hostView(a.hostId)).modelConfig?.status === 'idle');
  assert.equal((await hostView(b.hostId)).modelConfig?.status, 'pending');

  await mc().update(c.id, { modelName: 'model-3', authMode: 'x-api-key' });
  await mc().update(c.id, { modelName: 'model-4', name: 'renamed' });
  assert.equal((await hostView(b.hostId)).modelConfig?.status, 'pending');
  assert.equal((await hostView(b.hostId)).modelConfig?.name, 'renamed');

  const back = await host({}, b);
  await eventually(async () => (await hostView(b.hostId)).modelConfig?.status === 'idle');
  const got = settingsFrames(back.h);
  assert.equal(got.length, 1, 'several edits while away: only the latest is sent');
  assert.deepEqual(got[0].config, { baseUrl: 'https://llm.example', authMode: 'x-api-key', apiKey: KEY, model: 'model-4' });
  await eventually(async () => settingsFrames(a.h).some((f) => f.config?.model === 'model-4'));

  // A name-only edit changes nothing the host holds: nothing is sent.
  const before = settingsFrames(a.h).length;
  await mc().update(c.id, { name: 'just a label' });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(settingsFrames(a.h).length, before);
});

test('deleting a bound host frees the configuration; deleting the account removes everything it owns', async () => {
  const owner = await t.user();
  const c = await config({}, owner.key);
  const paired = await pairHost(t, owner.key);
  const h = await connectFakeHost(t, paired.credential);
  open.push(h);
  await applyTo(paired.hostId, c.id, owner.key);
  const second = await config({}, owner.key);
  const p2 = await pairHost(t, owner.key);
  open.push(await connectFakeHost(t, p2.credential));
  await applyTo(p2.hostId, second.id, owner.key);

  const oc = t.client(owner.key);
  assert.deepEqual(await oc.hosts.remove(paired.hostId), { deleted: true });
  assert.equal((await oc.modelConfigs.get(c.id)).hostCount, 0);
  assert.deepEqual(await oc.modelConfigs.remove(c.id), { deleted: true });

  await t.admin.admin.deleteUser(owner.id);
  const left = await t.hub.ctx.em().getConnection().execute(`select count(*) as n from model_configs where user_id = ?`, [owner.id]);
  assert.equal(Number(left[0].n), 0);
});

// Busy hosts (409 on apply, pending on edit, delivery when the turn ends) need real runs: see model-configs-e2e.test.ts.
