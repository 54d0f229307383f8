// the cap on unpaid channel orders (PENDING_ORDERS_PER_ACCOUNT = 20, src/account-caps.ts)
// counts only orders still `pending`, and `POST /orders/{id}/cancel` takes one out of that count at once.
// So an account loops create → cancel: every create is a signed order call to the payment provider made
// with the merchant's credentials (what the cap was for) and an `orders` row kept for good (cancelled and
// expired orders are never removed). Two requests per order: about 300 provider calls and 300 rows a
// minute per API key under the general rate limit (600/min), and an account may hold 50 keys.
// Assumed: an account creates at most 2 × PENDING_ORDERS_PER_ACCOUNT (40) channel orders per
// ORDER_TTL_MINUTES window, whatever became of them; past that 409 (or 429) with the hub's envelope.
// (Compatible with test/billing-orders-cap.test.ts: one cancelled order still makes room for one more.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { PENDING_ORDERS_PER_ACCOUNT } from '../src/account-caps.js';

const ASSUMED_WINDOW_CAP = 2 * PENDING_ORDERS_PER_ACCOUNT;

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 0 });
});
after(() => t.close());

test(`create-then-cancel does not let one account open more than ${ASSUMED_WINDOW_CAP} channel orders in 30 minutes`, async () => {
  const u = await t.user('order-churner');
  let created = 0;
  let refusal: { status: number; text: string; body: any } | undefined;
  for (let i = 0; i < ASSUMED_WINDOW_CAP + 20; i++) {
    const r = await t.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { packId: 'pack-1k', payMethod: 'alipay' } });
    if (r.status !== 201) {
      refusal = r;
      break;
    }
    created++;
    const c = await t.api('POST', `/api/v1/orders/${encodeURIComponent(r.body.data.id)}/cancel`, { token: u.key });
    assert.equal(c.status, 200, c.text);
  }
  const [rows] = await t.hub.ctx.em().getConnection().execute(`select count(*)::int as n from orders where user_id = ?`, [u.id]);
  assert.ok(refusal, `${created} channel orders created (and cancelled) in a row, ${rows.n} order rows kept; none refused`);
  assert.ok(refusal.status === 409 || refusal.status === 429, `refused with ${refusal.status}: ${refusal.text}`);
  assert.equal(refusal.body?.data, null);
  assert.ok(created <= ASSUMED_WINDOW_CAP, `${created} created before the refusal`);
});
