// Payment orders are bounded before the provider is called (PENDING_ORDERS_PER_ACCOUNT unpaid,
// CHANNEL_ORDERS_PER_WINDOW made in an order's lifetime), each a signed call with the merchant's
// credentials. Two ways past the bounds:
// - the bounds counted stored orders, and an order the provider refused is not stored: a request the
//   provider refuses (or that times out) could be repeated without end, each one a signed call;
// - the count and the insert were not one step: requests sent at once all read the same count, so 60 at
//   once made 60 provider calls and 60 unpaid orders past a cap of 20.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { CHANNEL_ORDERS_PER_WINDOW, PENDING_ORDERS_PER_ACCOUNT } from '../src/account-caps.js';

const calls = { n: 0 };
const provider = http.createServer((req, res) => {
  calls.n++;
  req.resume();
  res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":"SYSTEM_ERROR","message":"try later"}');
});
const pem = () => generateKeyPairSync('rsa', { modulusLength: 2048 });

let failing: TestHub;
let sandbox: TestHub;
before(async () => {
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  const [merchant, platform] = [pem(), pem()];
  failing = await startTestHub({ starterTokens: 0 }, {
    WECHAT_PAY_MCH_ID: '1900000001', WECHAT_PAY_APP_ID: 'wx00000000000000aa', WECHAT_PAY_SERIAL_NO: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
    WECHAT_PAY_PRIVATE_KEY: merchant.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    WECHAT_PAY_API_V3_KEY: randomBytes(16).toString('hex'), WECHAT_PAY_PLATFORM_SERIAL: 'PUB_KEY_ID_0114232134912410000000000000',
    WECHAT_PAY_PLATFORM_PUBLIC_KEY: platform.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    WECHAT_PAY_BASE_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}`, PAYMENT_PUBLIC_URL: 'https://hub.example.test',
  });
  sandbox = await startTestHub({ starterTokens: 0 });
});
after(async () => {
  await Promise.all([failing?.close(), sandbox?.close()]);
  provider.close();
});

test(`orders the provider refuses count too: at most ${CHANNEL_ORDERS_PER_WINDOW} provider calls per account in the window`, async () => {
  const u = await failing.user();
  const statuses: number[] = [];
  for (let i = 0; i < CHANNEL_ORDERS_PER_WINDOW + 10; i++) {
    statuses.push((await failing.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { packId: 'pack-1k', payMethod: 'wechat' } })).status);
  }
  assert.equal(calls.n, CHANNEL_ORDERS_PER_WINDOW, `${calls.n} signed provider calls; statuses ${JSON.stringify(statuses)}`);
  assert.ok(statuses.slice(CHANNEL_ORDERS_PER_WINDOW).every((s) => s === 429), JSON.stringify(statuses));
  assert.ok(statuses.slice(0, CHANNEL_ORDERS_PER_WINDOW).every((s) => s === 502), JSON.stringify(statuses));
});

test(`orders sent at once are held to the caps: at most ${PENDING_ORDERS_PER_ACCOUNT} unpaid`, async () => {
  const u = await sandbox.user();
  const rs = await Promise.all(Array.from({ length: 60 }, () => sandbox.api('POST', '/api/v1/orders/token-pack', { token: u.key, body: { packId: 'pack-1k', payMethod: 'alipay' } })));
  const made = rs.filter((r) => r.status === 201).length;
  assert.equal(made, PENDING_ORDERS_PER_ACCOUNT, `${made} unpaid orders made at once: ${JSON.stringify(rs.map((r) => r.status))}`);
  assert.ok(rs.every((r) => r.status === 201 || r.status === 409 || r.status === 429), JSON.stringify(rs.map((r) => r.status)));
  const [row] = await sandbox.hub.ctx.em().getConnection().execute(`select count(*)::int as n from orders where user_id = ? and status = 'pending'`, [u.id]);
  assert.equal(row.n, PENDING_ORDERS_PER_ACCOUNT);
});
