// Audit (billing, forty-fifth session): a balance below zero (a run on one's own agent is charged in full, even below
// zero: decisions.md, economy-charges.test.ts) makes every positive balance change smaller than the
// deficit fail with INSUFFICIENT_BALANCE, because applyBalanceChange (src/billing/ledger.ts) checks
// `balance + delta >= 0` whatever the sign of delta. So a token pack the user paid for real money is
// never delivered (the provider's notify gets an error and retries for ever, the order stays
// pending, the administrator's confirm-payment answers 4091 too), a rejected redemption cannot be
// refunded, and an administrator's grant was refused. A credit now always lands; debits keep the check.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { pairHost, connectFakeHost, eventually, agentWhenReady, type FakeHost } from './helpers/host.js';

let t: TestHub;
before(async () => {
  t = await startTestHub({ starterTokens: 10_000 });
});
after(() => t.close());

const balance = async (key: string) => (await t.client(key).billing.balance()).balance;

/** A user whose own run took the balance to 10,000 − cost (below zero when cost > 10,000). */
async function userBelowZero(cost: number, before?: (key: string) => Promise<void>) {
  const u = await t.user();
  if (before) await before(u.key);
  const { credential } = await pairHost(t, u.key);
  const host: FakeHost = await connectFakeHost(t, credential, { capacity: 1 });
  const hostId = (await t.client(u.key).hosts.list()).items[0].id;
  const a = await agentWhenReady(t.client(u.key), { name: 'mine', scope: 'private', hostId, engine: 'claude-code', workDir: '' });
  const c = t.client(u.key);
  const r: any = await c.sessions.create({ agentId: a.id, content: 'go' });
  const start: any = await eventually(async () => host.frames.find((f) => f.t === 'run.start'), 5000, 10);
  host.send({ t: 'run.end', runId: start.runId, ok: true, usage: { inputTokens: cost, outputTokens: 0 } });
  await eventually(async () => ((await c.sessions.get(r.sessionId)).status === 'active' ? true : undefined), 5000, 20);
  host.close();
  return u;
}

async function payThroughSandbox(payUrl: string) {
  const page = await (await fetch(t.url + payUrl)).text();
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]] = m[2];
  const res = await fetch(t.url + '/api/v1/payments/notify/sandbox', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  return { status: res.status, text: await res.text() };
}

test('a token pack paid for through a channel is delivered even when the balance is below zero', async () => {
  const u = await userBelowZero(11_500); // balance −1,500
  assert.equal(await balance(u.key), -1_500);
  const c = t.client(u.key);
  const o = await c.billing.buyTokenPack({ packId: 'pack-1k', payMethod: 'alipay' }); // 1,000 tokens for 1.00 CNY
  const paid = await payThroughSandbox(o.payUrl!);
  const after = await c.billing.order(o.id);
  assert.deepEqual(
    { notify: paid.status, order: after.status, balance: await balance(u.key) },
    { notify: 200, order: 'paid', balance: -500 },
    `the provider took the money; notify answered ${paid.status} ${paid.text.slice(0, 120)}`,
  );
});

test("the administrator's confirm-payment delivers a paid pack to a balance below zero", async () => {
  const u = await userBelowZero(12_000); // −2,000
  const o = await t.client(u.key).billing.buyTokenPack({ packId: 'pack-1k', payMethod: 'wechat' });
  const r = await t.api('POST', `/api/v1/admin/orders/${o.id}/confirm-payment`, { token: t.adminKey, body: {} });
  assert.equal(r.status, 200, r.text);
  assert.equal(await balance(u.key), -1_000);
});

test('rejecting a redemption refunds its tokens even when the balance has gone below zero since', async () => {
  let rid = '';
  const u = await userBelowZero(13_000, async (key) => {
    rid = (await t.client(key).billing.redeem('coffee-voucher', 1)).id; // 2,000 tokens → balance 8,000
  }); // 8,000 − 13,000 = −5,000
  assert.equal(await balance(u.key), -5_000);
  const r = await t.api('POST', `/api/v1/admin/redeems/${rid}/reject`, { token: t.adminKey, body: { reason: 'out of vouchers' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(await balance(u.key), -3_000);
});

test('an administrator can grant tokens to an account below zero', async () => {
  const u = await userBelowZero(12_000); // −2,000
  const r = await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: { qty: 1 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(await balance(u.key), -1_000);
});
