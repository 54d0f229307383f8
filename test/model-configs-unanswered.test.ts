// A settings command the host received but did not answer (silence past the
// deadline, or its channel lost after the command went out) may have been
// applied all the same. The apply answers 409 and the hub keeps what it had,
// and it sends that again when the host is next online or idle, so the host
// ends where the hub says it is. A command that never reached the host owes
// nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import type { HostBinding, NewModelConfig } from '../src/client/index.js';
import type { HubToHost } from '../host-protocol/frames.js';
import { apiError } from './helpers/api-error.js';

let t: TestHub;
let u: { id: string; key: string };
const open: FakeHost[] = [];

before(async () => {
  // The settings command's deadline is the heartbeat window: 3 s.
  t = await startTestHub({ hostHeartbeatTimeoutMs: 3000 } as any);
  u = await t.user();
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

type Cred = { hostId: string; credential: string };
async function host(opts: Parameters<typeof connectFakeHost>[2] = {}, cred?: Cred) {
  const c = cred ?? (await pairHost(t, u.key));
  const h = await connectFakeHost(t, c.credential, opts);
  open.push(h);
  return { ...c, h };
}
async function leave(h: FakeHost) {
  h.close();
  await h.closed;
}
const config = (over: Partial<NewModelConfig> = {}) =>
  t.client(u.key).modelConfigs.create({ name: 'cfg', apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-unanswered-0123456789', modelName: 'model-1', ...over });
const applyTo = (hostId: string, configId: string | null) => t.client(u.key).hosts.applyModelConfig(hostId, configId);
const settingsFrames = (h: FakeHost) => h.frames.filter((f): f is Extract<HubToHost, { t: 'settings.apply' }> => f.t === 'settings.apply');
const binding = async (hostId: string) => (await t.client(u.key).hosts.list()).items.find((x) => x.id === hostId)!.modelConfig as HostBinding | null;
/** Answers every settings command but the first `silent` ones, which it takes and never answers. */
const silentFirst = (silent: number) => (f: HubToHost & { id: number }) => (f.t === 'settings.apply' && silent-- > 0 ? undefined : f.t === 'settings.apply' ? { t: 'reply' as const, id: f.id, ok: true, data: { applied: true } } : undefined);

test('an apply the host took but never answered → 409; the host on its default is sent a revert when it is back', async () => {
  const a = await host({ answer: silentFirst(1) });
  const c = await config();
  await assert.rejects(applyTo(a.hostId, c.id), apiError(409, '4096'));
  assert.equal(await binding(a.hostId), null, 'the hub keeps the default');
  assert.equal((await t.client(u.key).modelConfigs.get(c.id)).hostCount, 0);
  await leave(a.h);

  const back = await host({}, a);
  const f = await back.h.next((x) => x.t === 'settings.apply');
  assert.equal((f as Extract<HubToHost, { t: 'settings.apply' }>).config, null, 'the settings it may have written are reverted');
  assert.equal(await binding(a.hostId), null);
  // Delivered once: a later hello owes nothing.
  await leave(back.h);
  const third = await host({}, a);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(settingsFrames(third.h).length, 0);
});

test('an apply over another configuration, unanswered → 409; the previous one is kept, marked failed, and sent again on return', async () => {
  const p = await config({ name: 'previous', baseUrl: 'https://previous.example' });
  const x = await config({ name: 'next', baseUrl: 'https://next.example' });
  const a = await host();
  await applyTo(a.hostId, p.id);
  await leave(a.h);
  const silent = await host({ answer: silentFirst(1) }, a);
  await assert.rejects(applyTo(a.hostId, x.id), apiError(409, '4096'));
  const kept = await binding(a.hostId);
  assert.equal(kept?.configId, p.id);
  assert.equal(kept?.status, 'failed');
  assert.match(kept?.lastError ?? '', /did not answer/);
  await leave(silent.h);

  const back = await host({}, a);
  const f = (await back.h.next((y) => y.t === 'settings.apply')) as Extract<HubToHost, { t: 'settings.apply' }>;
  assert.equal(f.config?.baseUrl, 'https://previous.example');
  const v = await eventually(async () => {
    const b = await binding(a.hostId);
    return b?.status === 'idle' && b;
  });
  assert.deepEqual(v, { configId: p.id, name: 'previous', status: 'idle', lastError: null });
});

test('a revert the host took but never answered → 409; the configuration is kept, marked failed, and sent again on return', async () => {
  const p = await config({ name: 'kept', baseUrl: 'https://kept.example' });
  const a = await host();
  await applyTo(a.hostId, p.id);
  await leave(a.h);
  const silent = await host({ answer: silentFirst(1) }, a);
  await assert.rejects(applyTo(a.hostId, null), apiError(409, '4096'));
  const kept = await binding(a.hostId);
  assert.equal(kept?.configId, p.id);
  assert.equal(kept?.status, 'failed');
  await leave(silent.h);

  const back = await host({}, a);
  const f = (await back.h.next((y) => y.t === 'settings.apply')) as Extract<HubToHost, { t: 'settings.apply' }>;
  assert.equal(f.config?.baseUrl, 'https://kept.example');
  await eventually(async () => (await binding(a.hostId))?.status === 'idle');
});

test('a channel lost after the command went out → 409 offline; the host is sent a revert when it is back', async () => {
  const a = await host({ answer: () => undefined });
  const c = await config();
  const applying = applyTo(a.hostId, c.id);
  await a.h.next((x) => x.t === 'settings.apply');
  a.h.ws.terminate();
  await assert.rejects(applying, apiError(409, '4094'));
  assert.equal(await binding(a.hostId), null);
  await eventually(async () => (await t.client(u.key).hosts.get(a.hostId)).status === 'offline');

  const back = await host({}, a);
  const f = (await back.h.next((y) => y.t === 'settings.apply')) as Extract<HubToHost, { t: 'settings.apply' }>;
  assert.equal(f.config, null);
});

test('a command that never reached the host (offline) owes nothing: no settings frame when it is back', async () => {
  const a = await host();
  await leave(a.h);
  await eventually(async () => (await t.client(u.key).hosts.get(a.hostId)).status === 'offline');
  const c = await config();
  await assert.rejects(applyTo(a.hostId, c.id), apiError(409, '4094'));
  const back = await host({}, a);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(settingsFrames(back.h).length, 0);
  assert.equal(await binding(a.hostId), null);
});
