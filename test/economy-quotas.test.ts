// Issue 12, part 5: plan quotas bite (429 4092 naming the quota; administrators
// exempt; PLAN_QUOTAS=off turns them off) and a paid plan grants its monthly
// tokens when bought and once per 30-day period after, even with two nodes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startCluster, clusterSkipReason } from './helpers/cluster.js';
import { pairHost, eventually } from './helpers/host.js';
import { seedHost } from './helpers/seed.js';
import { apiError, failure } from './helpers/api-error.js';
import type { AgentWriteBody } from '../src/client/index.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ planQuotas: true, starterTokens: 0 });
  // Small free-plan quotas keep the test short; the rule is the same for any number.
  await t.hub.ctx.em().execute(`update plans set quotas = quotas || '{"hosts": 1, "agents": 2, "sessionsPerDay": 3}'::jsonb where id = 'free'`);
});
after(() => t.close());

const agentBody = (hostId: string, name: string): AgentWriteBody => ({ name, scope: 'private', hostId, engine: 'claude-code', workDir: '' });
const grant = (id: string, qty: number) => t.admin.admin.grantTokens(id, qty);
const balance = async (key: string) => (await t.client(key).billing.balance()).balance;

test('agents: at the bound created, one past it → 429 4092 naming the quota; a bigger plan lifts it', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const hostId = await seedHost(t, u.id);
  for (const n of ['a1', 'a2']) assert.equal((await c.agents.create(agentBody(hostId, n))).name, n);
  const over = await failure(c.agents.create(agentBody(hostId, 'a3')));
  assert.deepEqual([over.status, over.code], [429, '4092']);
  assert.match(over.message, /agents \(2 on the Free plan\)/);
  assert.equal((await c.agents.mine()).total, 2, 'nothing stored');

  await t.admin.admin.setPlan(u.id, { planId: 'pro', planExpireAt: Date.now() + 86_400_000 });
  assert.equal((await c.agents.create(agentBody(hostId, 'a3'))).name, 'a3', 'pro allows 50');
});

test('hosts: one pairing on the free plan; a second pair key or a second pairing → 429 4092', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const early = await c.hosts.pairKey();
  await pairHost(t, u.key);
  const key = await failure(c.hosts.pairKey());
  assert.deepEqual([key.status, key.code], [429, '4092']);
  assert.match(key.message, /hosts \(1 on the Free plan\)/);
  // A key made before the first pairing cannot pair a second host either.
  await assert.rejects(t.client().hosts.pair(early.pairKey, 'second'), apiError(429, '4092'));
  assert.equal((await c.hosts.list()).total, 1);
});

test('sessions per day: at the bound opened, one past it → 429 4092, nothing stored', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const hostId = await seedHost(t, u.id);
  const agentId = (await c.agents.create(agentBody(hostId, 's'))).id;
  for (let i = 0; i < 3; i++) assert.ok('id' in (await c.sessions.create({ agentId })), 'a session (201), not a run');
  const over = await failure(c.sessions.create({ agentId }));
  assert.deepEqual([over.status, over.code], [429, '4092']);
  assert.match(over.message, /sessions per day \(3 on the Free plan\)/);
  await assert.rejects(c.sessions.create({ agentId, content: 'hi' }), apiError(429, '4092'));
  assert.equal((await c.sessions.list()).total, 3);
  // Yesterday's sessions do not count against today.
  await t.hub.ctx.em().execute(`update session_opens set day = day - 1 where user_id = ?`, [u.id]);
  assert.ok('id' in (await c.sessions.create({ agentId })));
});

test('sessions per day count the sessions opened, not those still there: deleting them gives nothing back', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const agentId = (await c.agents.create(agentBody(await seedHost(t, u.id), 'd'))).id;
  for (let i = 0; i < 3; i++) {
    const s = await c.sessions.create({ agentId });
    await c.sessions.remove((s as { id: string }).id);
  }
  assert.equal((await c.sessions.list()).total, 0);
  await assert.rejects(c.sessions.create({ agentId }), apiError(429, '4092'));
});

test('administrators are exempt', async () => {
  const me = await t.admin.me();
  const hostId = await seedHost(t, me.id);
  for (let i = 0; i < 3; i++) assert.equal((await t.admin.agents.create(agentBody(hostId, `adm${i}`))).name, `adm${i}`);
});

test('PLAN_QUOTAS=off: no quota bites, and opening a session writes no day counter', async () => {
  const off = await startTestHub({ planQuotas: false });
  try {
    await off.hub.ctx.em().execute(`update plans set quotas = quotas || '{"agents": 1}'::jsonb where id = 'free'`);
    const u = await off.user();
    const hostId = await seedHost(off, u.id);
    for (const n of ['x', 'y', 'z']) assert.equal((await off.client(u.key).agents.create(agentBody(hostId, n))).name, n);
    // The counter serves the quota alone: with quotas off it is a statement per session for nothing.
    const agentId = (await off.client(u.key).agents.mine()).items[0].id;
    await off.client(u.key).sessions.create({ agentId });
    assert.deepEqual(await off.hub.ctx.em().execute(`select n from session_opens where user_id = ?`, [u.id]), []);
  } finally {
    await off.close();
  }
});

test('monthly tokens: granted when the plan is bought, once per 30-day period after, not again on renewal', async () => {
  const u = await t.user();
  await grant(u.id, 30); // 30,000 = a month of pro
  const c = t.client(u.key);
  await assert.rejects(c.billing.buyPlan({ planId: 'pro', cycle: 'quarter', payMethod: 'token' }), apiError(429), 'a quarter costs 81,000');
  // Paid through a channel: a cycle paid from the balance buys no monthly tokens (billing-plan-grants-paid.test.ts).
  const payMonth = async () => {
    const o = await c.billing.buyPlan({ planId: 'pro', cycle: 'month', payMethod: 'alipay' });
    assert.equal((await t.admin.admin.confirmPayment(o.id, o.paymentRef!)).status, 'paid');
  };
  await payMonth();
  assert.equal(await balance(u.key), 50000, '30,000 + 20,000 monthly tokens');

  await payMonth();
  assert.equal(await balance(u.key), 50000, 'a renewal in the same period grants nothing');

  // The next period starts: the sweep grants it exactly once.
  await t.hub.ctx.em().execute(`update users set plan_anchor_at = plan_anchor_at - interval '31 days' where id = ?`, [u.id]);
  const { PlanGrantSweeper } = await import('../src/billing/plan-grants.js');
  const sweeper = new PlanGrantSweeper(t.hub.ctx);
  await Promise.all([sweeper.sweepOnce(), new PlanGrantSweeper(t.hub.ctx).sweepOnce(), new PlanGrantSweeper(t.hub.ctx).sweepOnce()]);
  await sweeper.sweepOnce();
  assert.equal(await balance(u.key), 70000);
  const grants = (await c.billing.ledger({ type: 'plan' })).items.filter((e) => e.amount > 0);
  assert.deepEqual(grants.map((e) => e.amount), [20000, 20000]);
  const sum = (await c.billing.ledger({ pageSize: 100 })).items.reduce((s, e) => s + e.amount, 0);
  assert.equal(sum, 70000, 'the ledger adds up to the balance');
});

test('two nodes sweeping every 20 ms grant a new period exactly once', { skip: await clusterSkipReason({ redis: false }) }, async () => {
  const c = await startCluster([{ nodeId: 'g1', planGrantSweepMs: 20, starterTokens: 0 }, { nodeId: 'g2', planGrantSweepMs: 20, starterTokens: 0 }], { redis: false });
  try {
    const [a, b] = c.hubs;
    const users = await Promise.all(Array.from({ length: 5 }, (_, i) => a.user(`grant-${i}`)));
    for (const u of users) {
      assert.equal((await b.admin.admin.setPlan(u.id, { planId: 'team', planExpireAt: Date.now() + 90 * 86_400_000 })).planId, 'team');
    }
    const bal = async (key: string) => (await a.client(key).billing.balance()).balance;
    for (const u of users) assert.equal(await bal(u.key), 100000, 'the first period on assignment');
    await a.hub.ctx.em().execute(`update users set plan_anchor_at = plan_anchor_at - interval '30 days 1 second' where id in (?)`, [users.map((u) => u.id)]);
    await eventually(async () => ((await Promise.all(users.map((u) => bal(u.key)))).every((x) => x === 200000) ? true : undefined), 10_000, 50);
    await new Promise((r) => setTimeout(r, 300)); // many more sweeps on both nodes
    for (const u of users) {
      assert.equal(await bal(u.key), 200000);
      const items = (await b.client(u.key).billing.ledger({ type: 'plan' })).items;
      assert.equal(items.length, 2, 'one entry per period');
    }
  } finally {
    await c.close();
  }
});
