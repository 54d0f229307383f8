// Error envelopes under a race (found by an audit).
//
// `POST /hosts/{id}/model-config` checks that the configuration is the caller's
// (`configs.owned`) before it queues behind the host's earlier settings write
// (`serial`), and writes the binding only later, under the lease. A
// configuration deleted in between (it is not bound yet, so DELETE succeeds)
// made that write hit the foreign key: the unhandled 23503 reached the client
// as a 500 instead of the 404 (configuration gone) a client can act on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, wrapHubQueries, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, type FakeHost } from './helpers/host.js';
import { ApiError } from '../src/client/index.js';

let t: TestHub;
const open: FakeHost[] = [];
before(async () => {
  t = await startTestHub({ rateLimitModelTestPerMinute: 0 } as any);
});
after(async () => {
  for (const h of open) h.close();
  await t.close();
});

test('apply of a configuration deleted while the apply waited for the host → 4xx, never 500', { timeout: 30_000 }, async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const { hostId, credential } = await pairHost(t, u.key);
  let slow = true;
  let finishFirst: (() => void) | undefined;
  const h = await connectFakeHost(t, credential, {
    // The first settings write lasts until the test ends it (a slow disk, as long as the race below takes);
    // later ones answer at once.
    answer: (f) => {
      if (f.t !== 'settings.apply') return undefined;
      const reply = { t: 'reply' as const, id: f.id, ok: true as const, data: { applied: true } };
      if (!slow) return reply;
      slow = false;
      finishFirst = () => h.send(reply);
      return undefined;
    },
  });
  open.push(h);

  const mk = (name: string) => c.modelConfigs.create({ name, apiType: 'anthropic', baseUrl: 'https://llm.example', apiKey: 'sk-apply-delete-0123456789', modelName: 'm1' });
  const first = await mk('first');
  const second = await mk('second');

  const p1 = c.hosts.applyModelConfig(hostId, first.id);
  await eventually(async () => h.frames.some((f) => f.t === 'settings.apply'), 5000, 10);

  // The second apply passes its ownership check, then waits behind the first.
  let checked!: () => void;
  const ownedChecked = new Promise<void>((r) => (checked = r));
  const restore = wrapHubQueries(t.hub, (q, send) => {
    const r = send();
    if (/from "model_configs"|from model_configs/.test(q.text) && (q.text.includes(second.id) || q.values.includes(second.id))) void Promise.resolve(r).then(() => checked());
    return r;
  });
  const p2 = c.hosts.applyModelConfig(hostId, second.id).then(
    (v) => ({ status: 200, code: undefined as string | undefined, v }),
    (e) => (e instanceof ApiError ? { status: e.status, code: e.code, v: e.message } : Promise.reject(e)),
  );
  await ownedChecked;
  restore();

  // Not bound yet: the owner may delete it.
  try {
    assert.deepEqual(await c.modelConfigs.remove(second.id), { deleted: true });
  } finally {
    finishFirst!();
  }

  const r1 = await p1;
  assert.equal((r1.modelConfig as { configId?: string } | null)?.configId, first.id);
  const r2 = await p2;
  assert.ok(r2.status >= 400 && r2.status < 500, `apply of the deleted configuration answered ${r2.status} ${r2.code ?? ''} ${JSON.stringify(r2.v)}`);
  // And the host's binding is still the first configuration.
  assert.equal(((await c.hosts.get(hostId)).modelConfig as { configId?: string } | null)?.configId, first.id);
});
