// Payment channels that settle orders themselves. The tests act as the providers
// with keys of their own: Alipay (RSA2 page pay and its signed notify), WeChat Pay
// API v3 (a local stub of api.mch.weixin.qq.com that checks the merchant's request
// signature; notifies signed with the platform key, resource in AES-256-GCM under
// the APIv3 key), and the hub's sandbox pay page, end to end over HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCipheriv, createSign, createVerify, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError, failure } from './helpers/api-error.js';
import type { PlanOrder, TokenPackOrder } from '../src/client/index.js';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const pemPrivate = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
const pemPublic = (k: KeyObject) => k.export({ type: 'spki', format: 'pem' }).toString();

// --- Alipay, as the test plays it --------------------------------------------
const ALIPAY_APP_ID = '2021000000000001';
const GATEWAY = 'https://openapi.alipay.com/gateway.do';
const PUBLIC_URL = 'https://hub.example.test';
const aliMerchant = rsa(); // the hub's app key pair (Alipay holds its public half)
const aliPlatform = rsa(); // Alipay's own key pair (the hub holds its public half)

const sortedContent = (p: Record<string, string>, exclude: string[]) =>
  Object.keys(p).filter((k) => !exclude.includes(k) && p[k] !== '').sort().map((k) => `${k}=${p[k]}`).join('&');

/** An asynchronous notify as Alipay sends it: form-encoded, RSA2 over the sorted parameters without sign and sign_type. */
function alipayNotify(fields: Record<string, string>, key: KeyObject = aliPlatform.privateKey): Record<string, string> {
  const p: Record<string, string> = {
    notify_time: '2026-11-23 12:00:00', notify_type: 'trade_status_sync', notify_id: 'nid' + randomBytes(8).toString('hex'), app_id: ALIPAY_APP_ID,
    charset: 'utf-8', version: '1.0', sign_type: 'RSA2', trade_no: '2026112322001' + randomBytes(6).toString('hex'), trade_status: 'TRADE_SUCCESS',
    subject: 'tokens & more', buyer_logon_id: 'buy***@example.com', ...fields,
  };
  p.sign = createSign('RSA-SHA256').update(sortedContent(p, ['sign', 'sign_type']), 'utf8').sign(key, 'base64');
  return p;
}
const form = (p: Record<string, string>) => new URLSearchParams(p).toString();

// --- WeChat Pay, as the test plays it ----------------------------------------
const MCH_ID = '1900000001';
const WX_APP_ID = 'wx00000000000000aa';
const MCH_SERIAL = '5157F09EFDC096DE15EBE81A47057A7232F1B8E1';
const PLATFORM_SERIAL = 'PUB_KEY_ID_0114232134912410000000000000';
const API_V3_KEY = randomBytes(16).toString('hex'); // 32 ASCII bytes, as the merchant platform issues it
const wxMerchant = rsa();
const wxPlatform = rsa();
const wxWrongMerchant = rsa();

function platformHeaders(body: string, key: KeyObject = wxPlatform.privateKey, opts: { timestamp?: number; serial?: string } = {}) {
  const ts = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = randomBytes(16).toString('hex');
  const sig = createSign('RSA-SHA256').update(`${ts}\n${nonce}\n${body}\n`, 'utf8').sign(key, 'base64');
  return { 'wechatpay-timestamp': ts, 'wechatpay-nonce': nonce, 'wechatpay-signature': sig, 'wechatpay-serial': opts.serial ?? PLATFORM_SERIAL };
}

function encryptResource(plain: string, key = API_V3_KEY) {
  const nonce = randomBytes(6).toString('hex'); // 12 characters
  const associated_data = 'transaction';
  const c = createCipheriv('aes-256-gcm', Buffer.from(key, 'utf8'), Buffer.from(nonce, 'utf8'));
  c.setAAD(Buffer.from(associated_data, 'utf8'));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
  return { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext: ct.toString('base64'), associated_data, nonce };
}

type WechatOpts = { apiV3Key?: string; signKey?: KeyObject; timestamp?: number; serial?: string };

/** A payment notification as WeChat Pay v3 sends it: JSON, `resource` encrypted, headers signed by the platform key. */
function wechatNotify(tx: Record<string, unknown>, opts: WechatOpts = {}) {
  const transaction = {
    mchid: MCH_ID, appid: WX_APP_ID, trade_type: 'NATIVE', trade_state: 'SUCCESS', trade_state_desc: '支付成功', bank_type: 'OTHERS',
    transaction_id: '4200001234' + randomBytes(8).toString('hex'), success_time: '2026-11-23T20:00:00+08:00', payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' }, ...tx,
  };
  return wechatEvent('TRANSACTION.SUCCESS', transaction, opts);
}

/** Any notification WeChat Pay v3 sends to the notify_url: its event type and the resource it encrypts. */
function wechatEvent(eventType: string, resource: Record<string, unknown>, opts: WechatOpts = {}) {
  const body = JSON.stringify({
    id: randomBytes(16).toString('hex'), create_time: '2026-11-23T20:00:01+08:00', resource_type: 'encrypt-resource', event_type: eventType, summary: '支付成功',
    resource: encryptResource(JSON.stringify(resource), opts.apiV3Key),
  });
  return { body, headers: { 'content-type': 'application/json', ...platformHeaders(body, opts.signKey, opts) } };
}

/** api.mch.weixin.qq.com, reduced to the Native order call; refuses a request the merchant did not sign. */
const stub = { orders: [] as any[], refused: 0, answerKey: wxPlatform.privateKey, codeUrl: (ref: string) => `weixin://wxpay/bizpayurl?pr=${ref}` };
const wxStub = http.createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    const answer = (status: number, obj: unknown) => {
      const body = JSON.stringify(obj);
      res.writeHead(status, { 'content-type': 'application/json', ...platformHeaders(body, stub.answerKey) });
      res.end(body);
    };
    if (req.method !== 'POST' || req.url !== '/v3/pay/transactions/native') return answer(404, { code: 'NOT_FOUND', message: 'no such API' });
    const m = /^WECHATPAY2-SHA256-RSA2048 (.+)$/.exec(req.headers.authorization ?? '');
    const a: Record<string, string> = {};
    for (const part of (m?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)) a[part[1]] = part[2];
    const message = `POST\n${req.url}\n${a.timestamp}\n${a.nonce_str}\n${raw}\n`;
    const good = a.mchid === MCH_ID && a.serial_no === MCH_SERIAL && !!a.signature && Math.abs(Date.now() / 1000 - Number(a.timestamp)) < 300 &&
      createVerify('RSA-SHA256').update(message, 'utf8').verify(wxMerchant.publicKey, a.signature, 'base64');
    if (!good) {
      stub.refused++;
      return answer(401, { code: 'SIGN_ERROR', message: 'signature does not verify' });
    }
    const order = JSON.parse(raw);
    stub.orders.push(order);
    answer(200, { code_url: stub.codeUrl(order.out_trade_no) });
  });
});

let t: TestHub; // Alipay and WeChat Pay configured
let s: TestHub; // sandbox only (the test default)
let off: TestHub; // no sandbox; no Alipay; WeChat with a merchant key the provider does not know
let stubUrl: string;

const wxEnv = (privateKey: KeyObject) => ({
  WECHAT_PAY_MCH_ID: MCH_ID, WECHAT_PAY_APP_ID: WX_APP_ID, WECHAT_PAY_SERIAL_NO: MCH_SERIAL,
  // Escaped line breaks, as a PEM often travels through an env file.
  WECHAT_PAY_PRIVATE_KEY: pemPrivate(privateKey).replace(/\n/g, '\\n'),
  WECHAT_PAY_API_V3_KEY: API_V3_KEY, WECHAT_PAY_PLATFORM_PUBLIC_KEY: pemPublic(wxPlatform.publicKey), WECHAT_PAY_PLATFORM_SERIAL: PLATFORM_SERIAL,
  WECHAT_PAY_BASE_URL: stubUrl, PAYMENT_PUBLIC_URL: PUBLIC_URL,
});

before(async () => {
  await new Promise<void>((r) => wxStub.listen(0, '127.0.0.1', r));
  stubUrl = `http://127.0.0.1:${(wxStub.address() as AddressInfo).port}`;
  t = await startTestHub({ starterTokens: 0 }, {
    ALIPAY_APP_ID, ALIPAY_PRIVATE_KEY: pemPrivate(aliMerchant.privateKey),
    // Bare base64, as Alipay's console shows its public key.
    ALIPAY_PUBLIC_KEY: aliPlatform.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    ...wxEnv(wxMerchant.privateKey),
  });
  s = await startTestHub({ starterTokens: 0 });
  off = await startTestHub({}, { ...wxEnv(wxWrongMerchant.privateKey), PAYMENT_SANDBOX: '0' });
});
after(async () => {
  await Promise.all([t?.close(), s?.close(), off?.close()]);
  wxStub.close();
});

const balance = async (h: TestHub, key: string) => (await h.client(key).billing.balance()).balance;
const entriesFor = async (h: TestHub, ref: string) => Number((await h.hub.ctx.em().execute(`select count(*) as n from ledger_entries where ref = ?`, [ref]))[0].n);
const orderOf = (h: TestHub, key: string, id: string) => h.client(key).billing.order(id);
const buyPack = (h: TestHub, key: string, body: TokenPackOrder) => h.client(key).billing.buyTokenPack(body);
const buyPlan = (h: TestHub, key: string, body: PlanOrder) => h.client(key).billing.buyPlan(body);
// The notifies and the sandbox pay page are the providers' side of HTTP (form bodies, plain-text answers): raw fetches.
const post = (h: TestHub, path: string, body: string, headers: Record<string, string>) =>
  fetch(h.url + path, { method: 'POST', body, headers }).then(async (r) => ({ status: r.status, text: await r.text(), type: r.headers.get('content-type') }));
const postAlipay = (h: TestHub, p: Record<string, string>) => post(h, '/api/v1/payments/notify/alipay', form(p), { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
const postWechat = (h: TestHub, n: { body: string; headers: Record<string, string> }) => post(h, '/api/v1/payments/notify/wechat', n.body, n.headers);

test('Alipay: the order carries a page-pay URL signed RSA2 over the sorted parameters with the app key', async () => {
  const u = await t.user();
  const o = await buyPack(t, u.key, { packId: 'pack-10k', qty: 2, payMethod: 'alipay' });
  assert.deepEqual([o.status, o.amountCents, o.tokens, o.codeUrl], ['pending', 1900, 20000, null]);
  assert.ok(o.payUrl!.startsWith(GATEWAY + '?'), o.payUrl!);
  assert.equal(Date.parse(o.expiresAt!) - Date.parse(o.createdAt), 30 * 60_000);
  const p = Object.fromEntries(new URL(o.payUrl!).searchParams);
  assert.deepEqual([p.app_id, p.method, p.charset, p.sign_type, p.version, p.notify_url], [ALIPAY_APP_ID, 'alipay.trade.page.pay', 'utf-8', 'RSA2', '1.0', `${PUBLIC_URL}/api/v1/payments/notify/alipay`]);
  assert.match(p.timestamp, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  // The request is signed over every parameter but `sign` (sign_type included).
  assert.ok(createVerify('RSA-SHA256').update(sortedContent(p, ['sign']), 'utf8').verify(aliMerchant.publicKey, p.sign, 'base64'), 'request signature');
  const biz = JSON.parse(p.biz_content);
  assert.deepEqual([biz.out_trade_no, biz.total_amount, biz.product_code], [o.paymentRef, '19.00', 'FAST_INSTANT_TRADE_PAY']);
  assert.match(biz.time_expire, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  // The same answer on a read.
  assert.equal((await orderOf(t, u.key, o.id)).payUrl, o.payUrl);
});

test('Alipay: a notify signed with Alipay\'s key settles the order; a replay and 10 parallel copies credit once', async () => {
  const u = await t.user();
  const o = await buyPack(t, u.key, { packId: 'pack-10k', qty: 2, payMethod: 'alipay' });
  const n = alipayNotify({ out_trade_no: o.paymentRef!, total_amount: '19.00' });
  const first = await postAlipay(t, n);
  assert.deepEqual([first.status, first.text], [200, 'success']);
  const paid = await orderOf(t, u.key, o.id);
  assert.deepEqual([paid.status, paid.payUrl], ['paid', null]);
  assert.ok(paid.paidAt);
  assert.equal(await balance(t, u.key), 20000);

  assert.equal((await postAlipay(t, n)).text, 'success'); // a replay is acknowledged, so Alipay stops retrying
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => postAlipay(t, i % 2 ? n : alipayNotify({ out_trade_no: o.paymentRef!, total_amount: '19.00', trade_status: 'TRADE_FINISHED' }))));
  assert.ok(burst.every((b) => b.status === 200 && b.text === 'success'), JSON.stringify(burst));
  assert.equal(await balance(t, u.key), 20000);
  assert.equal(await entriesFor(t, o.id), 1);
});

test('Alipay: ten parallel first notifies of a pending order credit once', async () => {
  const u = await t.user();
  const o = await buyPack(t, u.key, { packId: 'pack-1k', payMethod: 'alipay' });
  const burst = await Promise.all(Array.from({ length: 10 }, () => postAlipay(t, alipayNotify({ out_trade_no: o.paymentRef!, total_amount: '1.00' }))));
  assert.ok(burst.every((b) => b.text === 'success'), JSON.stringify(burst));
  assert.equal(await balance(t, u.key), 1000);
  assert.equal(await entriesFor(t, o.id), 1);
});

test('Alipay: a tampered, foreign or mismatched notify is refused and settles nothing', async () => {
  const u = await t.user();
  const o = await buyPack(t, u.key, { packId: 'pack-10k', payMethod: 'alipay' });
  const ref = o.paymentRef!;
  const good = alipayNotify({ out_trade_no: ref, total_amount: '9.50' });
  // An order of another channel, at the same price: Alipay's signature settles only Alipay's orders.
  const wx = await buyPack(t, u.key, { packId: 'pack-10k', payMethod: 'wechat' });
  const refused = [
    { ...good, total_amount: '0.01' }, // changed after signing
    { ...good, trade_status: 'TRADE_SUCCESS', buyer_logon_id: 'other' },
    alipayNotify({ out_trade_no: ref, total_amount: '9.50' }, aliMerchant.privateKey), // not Alipay's key
    alipayNotify({ out_trade_no: ref, total_amount: '0.01' }), // signed, but not the order's amount
    alipayNotify({ out_trade_no: ref, total_amount: '9.50', app_id: '2021000000009999' }), // another app
    alipayNotify({ out_trade_no: 'pay_unknown', total_amount: '9.50' }),
    alipayNotify({ out_trade_no: wx.paymentRef!, total_amount: '9.50' }),
    { ...good, sign_type: 'RSA' },
    Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'sign')),
  ];
  for (const [i, p] of refused.entries()) {
    const r = await postAlipay(t, p);
    assert.deepEqual([r.status, r.text], [400, 'failure'], `case ${i}`);
  }
  // A parameter given twice is refused, even when both copies agree: what was verified must be what is read.
  for (const extra of ['&sign=x', `&trade_status=${good.trade_status}`, `&out_trade_no=${ref}`]) {
    assert.equal((await post(t, '/api/v1/payments/notify/alipay', form(good) + extra, { 'content-type': 'application/x-www-form-urlencoded' })).text, 'failure', extra);
  }
  // An authentic notify that reports no payment yet is acknowledged and settles nothing.
  assert.equal((await postAlipay(t, alipayNotify({ out_trade_no: ref, total_amount: '9.50', trade_status: 'WAIT_BUYER_PAY' }))).text, 'success');
  assert.equal((await orderOf(t, u.key, o.id)).status, 'pending');
  assert.equal(await balance(t, u.key), 0);
  // A notify far over the bound is refused by the body reader.
  assert.equal((await post(t, '/api/v1/payments/notify/alipay', 'a=' + 'x'.repeat(100_000), { 'content-type': 'application/x-www-form-urlencoded' })).status, 413);
  assert.equal((await postAlipay(t, good)).text, 'success');
  assert.equal(await balance(t, u.key), 10000);
  assert.equal((await orderOf(t, u.key, wx.id)).status, 'pending');
});

test('WeChat Pay: the Native order call is signed by the merchant and the order carries code_url', async () => {
  const u = await t.user();
  const before = stub.orders.length;
  const o = await buyPlan(t, u.key, { planId: 'pro', cycle: 'month', payMethod: 'wechat' });
  assert.equal(stub.orders.length, before + 1);
  const sent = stub.orders.at(-1);
  assert.deepEqual([sent.mchid, sent.appid, sent.out_trade_no, sent.amount.total, sent.amount.currency, sent.notify_url], [MCH_ID, WX_APP_ID, o.paymentRef, 3000, 'CNY', `${PUBLIC_URL}/api/v1/payments/notify/wechat`]);
  assert.match(sent.time_expire, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/);
  assert.deepEqual([o.status, o.codeUrl, o.payUrl], ['pending', `weixin://wxpay/bizpayurl?pr=${o.paymentRef}`, null]);
});

test('WeChat Pay: a platform-signed notify with an encrypted resource settles once; replays and 10 parallel copies change nothing', async () => {
  const u = await t.user();
  const plan = await buyPlan(t, u.key, { planId: 'pro', cycle: 'month', payMethod: 'wechat' });
  const n = wechatNotify({ out_trade_no: plan.paymentRef, amount: { total: 3000, payer_total: 3000, currency: 'CNY', payer_currency: 'CNY' } });
  const first = await postWechat(t, n);
  assert.equal(first.status, 204, first.text);
  assert.equal((await orderOf(t, u.key, plan.id)).status, 'paid');
  const mine = await t.client(u.key).billing.myPlan();
  assert.equal(mine.planId, 'pro');
  const burst = await Promise.all(Array.from({ length: 10 }, () => postWechat(t, n)));
  assert.ok(burst.every((b) => b.status === 204), JSON.stringify(burst));
  // Settling twice would have extended the plan by another month.
  assert.equal((await t.client(u.key).billing.myPlan()).expireAt, mine.expireAt);

  const pack = await buyPack(t, u.key, { packId: 'pack-100k', payMethod: 'wechat' });
  const packNotes = Array.from({ length: 10 }, () => wechatNotify({ out_trade_no: pack.paymentRef, amount: { total: 9000, currency: 'CNY' } }));
  const r = await Promise.all(packNotes.map((x) => postWechat(t, x)));
  assert.ok(r.every((b) => b.status === 204), JSON.stringify(r));
  assert.equal(await balance(t, u.key), 20000 + 100000, 'the pro plan\'s first month of tokens (once), then the pack (once)');
  assert.equal(await entriesFor(t, pack.id), 1);
});

test('WeChat Pay: a tampered, stale, foreign or undecryptable notify is refused with FAIL and settles nothing', async () => {
  const u = await t.user();
  const o = await buyPack(t, u.key, { packId: 'pack-1k', payMethod: 'wechat' });
  const tx = { out_trade_no: o.paymentRef, amount: { total: 100, currency: 'CNY' } };
  const good = wechatNotify(tx);
  const cases = [
    { body: good.body.replace('TRANSACTION.SUCCESS', 'TRANSACTION.SUCCESS '), headers: good.headers }, // body changed after signing
    wechatNotify(tx, { signKey: wxMerchant.privateKey }), // not the platform key
    wechatNotify(tx, { apiV3Key: randomBytes(16).toString('hex') }), // resource under another APIv3 key
    wechatNotify(tx, { timestamp: Math.floor(Date.now() / 1000) - 600 }), // stale signature
    wechatNotify(tx, { serial: 'PUB_KEY_ID_OTHER' }),
    wechatNotify({ ...tx, mchid: '1900000999' }),
    wechatNotify({ ...tx, appid: 'wx00000000000000bb' }), // the merchant's other app
    wechatNotify({ ...tx, amount: { total: 1, currency: 'CNY' } }),
    wechatNotify({ ...tx, out_trade_no: 'pay_unknown' }),
    { body: good.body, headers: { 'content-type': 'application/json' } },
  ];
  for (const [i, c] of cases.entries()) {
    const r = await postWechat(t, c);
    assert.equal(r.status, 400, `case ${i}: ${r.text}`);
    assert.equal(JSON.parse(r.text).code, 'FAIL', `case ${i}`);
  }
  assert.equal((await orderOf(t, u.key, o.id)).status, 'pending');
  assert.equal(await balance(t, u.key), 0);
  // Not a payment: acknowledged (or WeChat retries it for a day), settles nothing — a
  // transaction not paid, and a refund event, whose resource names no app.
  const other = wechatNotify({ ...tx, trade_state: 'NOTPAY' });
  assert.equal((await postWechat(t, other)).status, 204);
  const refund = wechatEvent('REFUND.SUCCESS', {
    mchid: MCH_ID, out_trade_no: o.paymentRef, transaction_id: '4200001234' + randomBytes(8).toString('hex'), out_refund_no: 'rf_1', refund_id: '50000000382019052709732678859',
    refund_status: 'SUCCESS', success_time: '2026-11-23T20:05:00+08:00', user_received_account: '支付用户零钱', amount: { total: 100, refund: 100, payer_total: 100, payer_refund: 100 },
  });
  assert.equal((await postWechat(t, refund)).status, 204);
  assert.equal((await orderOf(t, u.key, o.id)).status, 'pending');
  assert.equal((await postWechat(t, good)).status, 204);
  assert.equal(await balance(t, u.key), 1000);
});

test('WeChat Pay: an order call the provider refuses, answers unsigned or with an over-long code_url, is 502 5025 and stores no order', async () => {
  const u = await off.user();
  const refusedBefore = stub.refused;
  await assert.rejects(buyPack(off, u.key, { payMethod: 'wechat' }), apiError(502, '5025'));
  assert.equal(stub.refused, refusedBefore + 1, 'the stub refused the wrongly signed request');
  assert.equal((await off.client(u.key).billing.orders()).total, 0);

  const v = await t.user();
  stub.answerKey = wxMerchant.privateKey; // the answer is not signed by the platform
  try {
    await assert.rejects(buyPack(t, v.key, { payMethod: 'wechat' }), apiError(502, '5025'));
  } finally {
    stub.answerKey = wxPlatform.privateKey;
  }
  // Signed, but a code_url no QR code could carry.
  const codeUrl = stub.codeUrl;
  stub.codeUrl = (ref) => `weixin://wxpay/bizpayurl?pr=${ref}&x=${'y'.repeat(600)}`;
  try {
    await assert.rejects(buyPack(t, v.key, { payMethod: 'wechat' }), apiError(502, '5025'));
  } finally {
    stub.codeUrl = codeUrl;
  }
  assert.equal((await t.client(v.key).billing.orders()).total, 0);
});

test('an unconfigured channel answers 503 5031 at order creation and stores nothing', async () => {
  const u = await off.user();
  for (const [what, call] of [
    ['token-pack', () => buyPack(off, u.key, { payMethod: 'alipay' })],
    ['plan', () => buyPlan(off, u.key, { planId: 'pro', cycle: 'month', payMethod: 'alipay' })],
  ] as const) {
    const e = await failure(call());
    assert.deepEqual([e.status, e.code], [503, '5031'], what);
    assert.match(e.message, /alipay/);
  }
  assert.equal((await off.client(u.key).billing.orders()).total, 0);
  // Paying from the balance needs no channel.
  assert.equal((await buyPlan(off, u.key, { planId: 'pro', cycle: 'month', payMethod: 'token' })).status, 'paid');
  // No channel, no notify endpoint.
  assert.equal((await post(off, '/api/v1/payments/notify/alipay', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' })).status, 404);
  assert.equal((await post(off, '/api/v1/payments/notify/sandbox', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' })).status, 404);
});

/** Opens the sandbox pay page and returns its form's action and fields. */
async function openPayPage(h: TestHub, payUrl: string) {
  const res = await fetch(h.url + payUrl);
  const html = await res.text();
  if (res.status !== 200) return { status: res.status, html, action: '', fields: {} as Record<string, string> };
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const action = /<form method="post" action="([^"]+)"/.exec(html)![1];
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]] = m[2];
  return { status: res.status, html, action, fields };
}
const submit = (h: TestHub, action: string, fields: Record<string, string>) => post(h, action, form(fields), { 'content-type': 'application/x-www-form-urlencoded' });

test('sandbox: pay page → signed notify → order paid and tokens credited, over HTTP; replays and tampering credit nothing more', async () => {
  const u = await s.user();
  const o = await buyPack(s, u.key, { packId: 'pack-10k', payMethod: 'wechat' });
  assert.match(o.payUrl!, /^\/api\/v1\/payments\/sandbox\/pay\/ord_\w+\?t=[\w-]+$/);
  const page = await openPayPage(s, o.payUrl!);
  assert.equal(page.status, 200);
  assert.match(page.html, /10,000 tokens/);
  assert.equal(page.action, '/api/v1/payments/notify/sandbox');
  assert.equal(page.fields.out_trade_no, o.paymentRef);

  const tampered = await submit(s, page.action, { ...page.fields, total_cents: '1' });
  assert.equal(tampered.status, 400);
  assert.equal((await submit(s, page.action, { ...page.fields, sign: page.fields.sign.slice(0, -2) + 'AA' })).status, 400);
  const twice = await post(s, page.action, form(page.fields) + `&trade_status=${page.fields.trade_status}`, { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(twice.status, 400, 'a field given twice');
  assert.equal((await orderOf(s, u.key, o.id)).status, 'pending');

  const paid = await submit(s, page.action, page.fields);
  assert.equal(paid.status, 200);
  assert.match(paid.type ?? '', /^text\/html/);
  assert.equal((await orderOf(s, u.key, o.id)).status, 'paid');
  assert.equal(await balance(s, u.key), 10000);
  const again = await Promise.all(Array.from({ length: 10 }, () => submit(s, page.action, page.fields)));
  assert.ok(again.every((a) => a.status === 200));
  assert.equal(await balance(s, u.key), 10000);
  assert.equal(await entriesFor(s, o.id), 1);
  // The page of a paid order offers nothing to pay; a wrong page token finds nothing.
  assert.equal((await openPayPage(s, o.payUrl!)).status, 409);
  assert.equal((await openPayPage(s, o.payUrl!.replace(/t=.*/, 't=forged'))).status, 404);
  assert.equal((await openPayPage(s, o.payUrl!.replace(/\?t=.*/, ''))).status, 404);
});

test('a pending order expires after 30 minutes; a late payment still delivers once; the administrator can still confirm', async () => {
  const u = await s.user();
  const mk = () => buyPack(s, u.key, { packId: 'pack-1k', payMethod: 'alipay' });
  const setBack = (id: string, minutes: number) => s.hub.ctx.em().execute(`update orders set created_at = created_at - (? * interval '1 minute') where id = ?`, [minutes, id]);
  const young = await mk();
  const old = await mk();
  const late = await mk();
  const latePage = await openPayPage(s, late.payUrl!);
  await setBack(young.id, 29);
  await setBack(old.id, 31);
  await setBack(late.id, 31);

  // Another account's read of the order is a 404 and writes nothing to it.
  await assert.rejects(s.client((await s.user()).key).billing.order(old.id), apiError(404));
  const [stored] = await s.hub.ctx.em().execute(`select status from orders where id = ?`, [old.id]);
  assert.equal(stored.status, 'pending', "a stranger's read does not touch the order");

  assert.equal((await orderOf(s, u.key, young.id)).status, 'pending');
  const expired = await orderOf(s, u.key, old.id);
  assert.deepEqual([expired.status, expired.payUrl], ['expired', null]);
  const list = await s.client(u.key).billing.orders({ status: 'expired' });
  assert.deepEqual(list.items.map((i) => i.id).sort(), [old.id, late.id].sort());
  await assert.rejects(s.client(u.key).billing.cancelOrder(old.id), apiError(409));
  assert.equal((await openPayPage(s, old.payUrl!)).status, 409);

  // A payment the provider took at the deadline still delivers, once.
  assert.equal((await submit(s, latePage.action, latePage.fields)).status, 200);
  assert.equal((await orderOf(s, u.key, late.id)).status, 'paid');
  assert.equal(await balance(s, u.key), 1000);

  // The administrator's manual override works on an expired order too, and only once.
  const c = await s.admin.admin.confirmPayment(old.id, old.paymentRef!);
  assert.equal(c.status, 'paid');
  await assert.rejects(s.admin.admin.confirmPayment(old.id), apiError(409));
  assert.equal(await balance(s, u.key), 2000);
});

test('the administrator\'s confirm-payment settles a channel order; the provider\'s later notify credits nothing more', async () => {
  const u = await s.user();
  const o = await buyPack(s, u.key, { packId: 'pack-1k', payMethod: 'alipay' });
  const page = await openPayPage(s, o.payUrl!);
  assert.equal((await s.admin.admin.confirmPayment(o.id)).status, 'paid');
  assert.equal((await submit(s, page.action, page.fields)).status, 200);
  assert.equal(await balance(s, u.key), 1000);
  assert.equal(await entriesFor(s, o.id), 1);
});

test('configuration: a partly configured channel, or a channel without PAYMENT_PUBLIC_URL, stops the hub at start', async () => {
  const { loadConfig } = await import('../src/config.js');
  assert.throws(() => loadConfig({ ALIPAY_APP_ID: 'x', PAYMENT_PUBLIC_URL: PUBLIC_URL }), /ALIPAY_PRIVATE_KEY, ALIPAY_PUBLIC_KEY/);
  assert.throws(() => loadConfig({ WECHAT_PAY_MCH_ID: MCH_ID, PAYMENT_PUBLIC_URL: PUBLIC_URL }), /WECHAT_PAY_APP_ID/);
  assert.throws(() => loadConfig({ ALIPAY_APP_ID: 'x', ALIPAY_PRIVATE_KEY: 'k', ALIPAY_PUBLIC_KEY: 'k' }), /PAYMENT_PUBLIC_URL is required/);
  assert.throws(() => loadConfig({ PAYMENT_PUBLIC_URL: 'javascript:alert(1)' }), /PAYMENT_PUBLIC_URL must be an http/);
  const none = loadConfig({});
  assert.deepEqual([none.payments.sandbox, none.payments.alipay, none.payments.wechat], [false, undefined, undefined]);
  // Keys that do not parse stop the hub instead of failing the first payment.
  await assert.rejects(startTestHub({}, { ALIPAY_APP_ID: 'x', ALIPAY_PRIVATE_KEY: 'not a key', ALIPAY_PUBLIC_KEY: 'nor this', PAYMENT_PUBLIC_URL: PUBLIC_URL }), /ALIPAY_PRIVATE_KEY is not a readable RSA private key/);
});
