// An account could open pending channel orders without bound. Each one is a row kept for good
// (expired orders are never removed) and, on a real channel, a signed order call to the provider
// (WeChat Pay's Native order API) made by the hub on the caller's behalf with the merchant's
// credentials: nothing but the general rate limit stood in the way. An account holds at most
// PENDING_ORDERS_PER_ACCOUNT unpaid orders that can still be paid (src/account-caps.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { PENDING_ORDERS_PER_ACCOUNT } from '../src/account-caps.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

test('one account cannot hold hundreds of unpaid channel orders (src/account-caps.ts caps keys and model configs, not orders)', async () => {
  const u = await t.user();
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const batch = await Promise.all(
      Array.from({ length: 25 }, () => t.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { packId: 'pack-1k', payMethod: 'wechat' } })),
    );
    statuses.push(...batch.map((r) => r.status));
  }
  const made = statuses.filter((s) => s === 201).length;
  const pending = (await t.client(u.key).billing.orders({ status: 'pending', pageSize: 1 })).total;
  assert.ok(made < 300 && statuses.some((s) => s === 409 || s === 429), `${made} of 300 unpaid orders created, ${pending} pending at once`);
});

test('the next order past the cap is a 409 that names it; a cancelled order makes room again', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const ids: string[] = [];
  for (let i = 0; i < PENDING_ORDERS_PER_ACCOUNT; i++) ids.push((await c.billing.buyTokenPack({ packId: 'pack-1k', payMethod: 'alipay' })).id);
  const over = await t.api('POST', '/api/v1/orders/plan', { token: u.key, body: { planId: 'pro', cycle: 'month', payMethod: 'wechat' } });
  assert.equal(over.status, 409, over.text);
  assert.match(over.text, /unpaid orders/);
  await c.billing.cancelOrder(ids[0]);
  assert.equal((await c.billing.buyTokenPack({ packId: 'pack-1k', payMethod: 'alipay' })).status, 'pending');
});
