// Issue 12, part 5: plan quotas bite (429 4092 naming the quota; administrators
// exempt; PLAN_QUOTAS=off turns them off) and a paid plan grants its monthly
// tokens when bought and once per 30-day period after, even with two nodes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, eventually } from './helpers/host.js';
import { seedHost } from './helpers/seed.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ planQuotas: true, starterTokens: 0 });
  // Small free-plan quotas keep the test short; the rule is the same for any number.
  await t.hub.ctx.em().execute(`update plans set quotas = quotas || '{"hosts": 1, "agents": 2, "sessionsPerDay": 3}'::jsonb where id = 'free'`);
});
after(() => t.close());

const agentBody = (hostId: string, name: string) => ({ name, scope: 'private', hostId, engine: 'claude-code', workDir: '' });
const grant = (id: string, qty: number) => t.api('POST', `/api/v1/admin/users/${id}/grant-token`, { token: t.adminKey, body: { qty } });
const balance = async (key: string) => (await t.api('GET', '/api/v1/me/balance', { token: key })).body.data.balance as number;

test('agents: at the bound created, one past it → 429 4092 naming the quota; a bigger plan lifts it', async () => {
  const u = await t.user();
  const hostId = await seedHost(t, u.id);
  for (const n of ['a1', 'a2']) assert.equal((await t.api('POST', '/api/v1/agents', { token: u.key, body: agentBody(hostId, n) })).status, 201);
  const over = await t.api('POST', '/api/v1/agents', { token: u.key, body: agentBody(hostId, 'a3') });
  assert.deepEqual([over.status, over.body.code], [429, '4092']);
  assert.match(over.body.message, /agents \(2 on the Free plan\)/);
  assert.equal((await t.api('GET', '/api/v1/agents/mine', { token: u.key })).body.data.total, 2, 'nothing stored');

  const plan = await t.api('PATCH', `/api/v1/admin/users/${u.id}/plan`, { token: t.adminKey, body: { planId: 'pro', planExpireAt: Date.now() + 86_400_000 } });
  assert.equal(plan.status, 200, plan.text);
  assert.equal((await t.api('POST', '/api/v1/agents', { token: u.key, body: agentBody(hostId, 'a3') })).status, 201, 'pro allows 50');
});

test('hosts: one pairing on the free plan; a second pair key or a second pairing → 429 4092', async () => {
  const u = await t.user();
  const early = await t.api('POST', '/api/v1/hosts/pair-key', { token: u.key });
  assert.equal(early.status, 201);
  await pairHost(t, u.key);
  const key = await t.api('POST', '/api/v1/hosts/pair-key', { token: u.key });
  assert.deepEqual([key.status, key.body.code], [429, '4092']);
  assert.match(key.body.message, /hosts \(1 on the Free plan\)/);
  // A key made before the first pairing cannot pair a second host either.
  const pair = await t.api('POST', '/api/v1/hosts/pair', { body: { pairKey: early.body.data.pairKey, name: 'second' } });
  assert.deepEqual([pair.status, pair.body.code], [429, '4092']);
  assert.equal((await t.api('GET', '/api/v1/hosts', { token: u.key })).body.data.total, 1);
});

test('sessions per day: at the bound opened, one past it → 429 4092, nothing stored', async () => {
  const u = await t.user();
  const hostId = await seedHost(t, u.id);
  const agentId = (await t.api('POST', '/api/v1/agents', { token: u.key, body: agentBody(hostId, 's') })).body.data.id;
  for (let i = 0; i < 3; i++) assert.equal((await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId } })).status, 201);
  const over = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId } });
  assert.deepEqual([over.status, over.body.code], [429, '4092']);
  assert.match(over.body.message, /sessions per day \(3 on the Free plan\)/);
  const withContent = await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId, content: 'hi' } });
  assert.deepEqual([withContent.status, withContent.body.code], [429, '4092']);
  assert.equal((await t.api('GET', '/api/v1/sessions', { token: u.key })).body.data.total, 3);
  // Yesterday's sessions do not count against today.
  await t.hub.ctx.em().execute(`update sessions set created_at = now() - interval '1 day' where user_id = ?`, [u.id]);
  assert.equal((await t.api('POST', '/api/v1/sessions', { token: u.key, body: { agentId } })).status, 201);
});

test('administrators are exempt', async () => {
  const me = (await t.api('GET', '/api/v1/me', { token: t.adminKey })).body.data;
  const hostId = await seedHost(t, me.id);
  for (let i = 0; i < 3; i++) assert.equal((await t.api('POST', '/api/v1/agents', { token: t.adminKey, body: agentBody(hostId, `adm${i}`) })).status, 201);
});

test('PLAN_QUOTAS=off: no quota bites', async () => {
  const off = await startTestHub({ planQuotas: false });
  try {
    await off.hub.ctx.em().execute(`update plans set quotas = quotas || '{"agents": 1}'::jsonb where id = 'free'`);
    const u = await off.user();
    const hostId = await seedHost(off, u.id);
    for (const n of ['x', 'y', 'z']) assert.equal((await off.api('POST', '/api/v1/agents', { token: u.key, body: agentBody(hostId, n) })).status, 201);
  } finally {
    await off.close();
  }
});

test('monthly tokens: granted when the plan is bought, once per 30-day period after, not again on renewal', async () => {
  const u = await t.user();
  await grant(u.id, 30); // 30,000 = a month of pro
  const o = await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'quarter', payMethod: 'token' } });
  assert.equal(o.status, 429, 'a quarter costs 81,000');
  assert.equal((await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } })).status, 201);
  assert.equal(await balance(u.key), 20000, '30,000 − 30,000 + 20,000 monthly tokens');

  await grant(u.id, 30);
  assert.equal((await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'token' } })).status, 201);
  assert.equal(await balance(u.key), 20000, 'a renewal in the same period grants nothing');

  // The next period starts: the sweep grants it exactly once.
  await t.hub.ctx.em().execute(`update users set plan_anchor_at = plan_anchor_at - interval '31 days' where id = ?`, [u.id]);
  const { PlanGrantSweeper } = await import('../src/billing/plan-grants.js');
  const sweeper = new PlanGrantSweeper(t.hub.ctx);
  await Promise.all([sweeper.sweepOnce(), new PlanGrantSweeper(t.hub.ctx).sweepOnce(), new PlanGrantSweeper(t.hub.ctx).sweepOnce()]);
  await sweeper.sweepOnce();
  assert.equal(await balance(u.key), 40000);
  const grants = (await t.api('GET', '/api/v1/me/ledger?type=plan', { token: u.key })).body.data.items.filter((e: any) => e.amount > 0);
  assert.deepEqual(grants.map((e: any) => e.amount), [20000, 20000]);
  const sum = (await t.api('GET', '/api/v1/me/ledger?pageSize=100', { token: u.key })).body.data.items.reduce((s: number, e: any) => s + e.amount, 0);
  assert.equal(sum, 40000, 'the ledger adds up to the balance');
});

test('two nodes sweeping every 20 ms grant a new period exactly once', { skip: await clusterSkipReason({ redis: false }) }, async () => {
  const c = await startCluster([{ nodeId: 'g1', planGrantSweepMs: 20, starterTokens: 0 }, { nodeId: 'g2', planGrantSweepMs: 20, starterTokens: 0 }], { redis: false });
  try {
    const [a, b] = c.hubs;
    const users = await Promise.all(Array.from({ length: 5 }, (_, i) => a.user(`grant-${i}`)));
    for (const u of users) {
      assert.equal((await b.api('PATCH', `/api/v1/admin/users/${u.id}/plan`, { token: a.adminKey, body: { planId: 'team', planExpireAt: Date.now() + 90 * 86_400_000 } })).status, 200);
    }
    const bal = async (key: string) => (await a.api('GET', '/api/v1/me/balance', { token: key })).body.data.balance as number;
    for (const u of users) assert.equal(await bal(u.key), 100000, 'the first period on assignment');
    await a.hub.ctx.em().execute(`update users set plan_anchor_at = plan_anchor_at - interval '30 days 1 second' where id in (?)`, [users.map((u) => u.id)]);
    await eventually(async () => ((await Promise.all(users.map((u) => bal(u.key)))).every((x) => x === 200000) ? true : undefined), 10_000, 50);
    await new Promise((r) => setTimeout(r, 300)); // many more sweeps on both nodes
    for (const u of users) {
      assert.equal(await bal(u.key), 200000);
      const items = (await b.api('GET', '/api/v1/me/ledger?type=plan', { token: u.key })).body.data.items;
      assert.equal(items.length, 2, 'one entry per period');
    }
  } finally {
    await c.close();
  }
});
