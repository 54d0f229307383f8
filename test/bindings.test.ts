// Phone binding through a real local SMS webhook, the chat-platform binding
// and its bot confirmation, the bindings view, and the phone step-up of card reveals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startSmsWebhook, type SmsWebhook } from './helpers/sms.js';

const BOT_SECRET = 'bot-secret-123';
let sms: SmsWebhook;
let t: TestHub;

before(async () => {
  sms = await startSmsWebhook();
  t = await startTestHub({ rateLimitPhoneCodePerHour: 0 }, { SMS_WEBHOOK_URL: sms.url, CHATAPP_WEBHOOK_SECRET: BOT_SECRET });
});
after(async () => {
  await t.close();
  await sms.close();
});

const lastCodeFor = (phone: string) => sms.lastCodeFor(phone);
const ageCodes = () => t.hub.ctx.em().execute(`update phone_codes set created_at = now() - interval '2 minutes'`);

test('phone: send a code through the webhook, bind with it; the code is stored hashed', async () => {
  const u = await t.user();
  const s = await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13800000001', countryCode: '86' } });
  assert.equal(s.status, 200, s.text);
  assert.deepEqual([s.body.data.sent, s.body.data.countryCode], [true, '+86']);
  const msg = sms.inbox.at(-1);
  assert.deepEqual([msg.to, msg.phone, msg.countryCode], ['+8613800000001', '13800000001', '+86']);
  assert.match(msg.code, /^\d{6}$/);
  const rows = await t.hub.ctx.em().execute(`select code_hash from phone_codes where user_id = ?`, [u.id]);
  assert.ok(rows.length === 1 && !rows[0].code_hash.includes(msg.code));

  const wrong = await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13800000001', countryCode: '+86', code: msg.code === '000000' ? '111111' : '000000' } });
  assert.equal(wrong.status, 400);
  const ok = await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13800000001', countryCode: '+86', code: msg.code } });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body.data.phone, { countryCode: '+86', number: '138****0001' });
  assert.equal((await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13800000001', code: msg.code } })).status, 400, 'a code works once');
  const me = await t.api('GET', '/api/v1/me', { token: u.key });
  assert.equal(me.body.data.phone, '138****0001');

  // Another account cannot take the same number.
  const v = await t.user();
  const taken = await t.api('POST', '/api/v1/me/phone/send-code', { token: v.key, body: { phone: '13800000001' } });
  assert.equal(taken.status, 409);
});

test('phone: resend waits a minute (429), five wrong codes lock the code, expired codes are refused', async () => {
  const u = await t.user();
  const body = { phone: '13900000002' };
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body })).status, 200);
  const again = await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body });
  assert.equal(again.status, 429);
  assert.ok(Number(again.headers.get('retry-after')) > 0);
  const code = lastCodeFor('13900000002');
  const bad = code === '000000' ? '111111' : '000000';
  for (let i = 0; i < 5; i++) assert.equal((await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { ...body, code: bad } })).status, 400);
  const locked = await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { ...body, code } });
  assert.equal(locked.status, 400, 'the right code no longer works after five wrong ones');

  await ageCodes();
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body })).status, 200);
  await t.hub.ctx.em().execute(`update phone_codes set expires_at = now() - interval '1 second' where user_id = ?`, [u.id]);
  const expired = await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { ...body, code: lastCodeFor('13900000002') } });
  assert.equal(expired.status, 400);
  // A code sent for one number does not bind another.
  await ageCodes();
  await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body });
  const other = await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13900000003', code: lastCodeFor('13900000002') } });
  assert.equal(other.status, 400);
});

test('phone: validation, credentials, and a failing relay → 503', async () => {
  const u = await t.user();
  for (const body of [{}, { phone: 'abc' }, { phone: '12' }, { phone: '13800000000', countryCode: '+12345' }, { phone: '13800000000', x: 1 }]) {
    assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body })).status, 400, JSON.stringify(body));
  }
  assert.equal((await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13800000000' } })).status, 400);
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { body: { phone: '13800000000' } })).status, 401);
  sms.failNext = true;
  const r = await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13700000004' } });
  assert.equal(r.status, 503);
  // The failed send left no code behind and does not count for the resend wait.
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13700000004' } })).status, 200);
});

test('chat platform: attempt → bot confirms the code with the shared secret → bound; unbind', async () => {
  const u = await t.user('henry');
  const empty = await t.api('GET', '/api/v1/me/chatapp/binding', { token: u.key });
  assert.equal(empty.body.data.bound, false);
  const a = await t.api('POST', '/api/v1/me/chatapp/binding-attempts', { token: u.key });
  assert.equal(a.status, 201);
  assert.match(a.body.data.code, /^[A-Z2-9]{8}$/);
  assert.equal(a.body.data.status, 'pending');
  assert.equal((await t.api('GET', `/api/v1/me/chatapp/binding-attempts/${a.body.data.id}`, { token: u.key })).body.data.status, 'pending');

  const confirm = (body: unknown, secret?: string) => t.api('POST', '/api/v1/chatapp/confirm', { body, headers: secret ? { 'x-chatapp-secret': secret } : {} });
  assert.equal((await confirm({ code: a.body.data.code, chatUserId: 'tg-42' })).status, 401);
  assert.equal((await confirm({ code: a.body.data.code, chatUserId: 'tg-42' }, 'wrong')).status, 401);
  assert.equal((await confirm({ code: 'NOPE2345', chatUserId: 'tg-42' }, BOT_SECRET)).status, 404);
  assert.equal((await confirm({ code: a.body.data.code }, BOT_SECRET)).status, 400);
  const ok = await confirm({ code: a.body.data.code.toLowerCase(), chatUserId: 'tg-42', displayName: 'Henry on chat' }, BOT_SECRET);
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual([ok.body.data.bound, ok.body.data.userName], [true, 'henry']);
  assert.equal((await confirm({ code: a.body.data.code, chatUserId: 'tg-42' }, BOT_SECRET)).status, 404, 'a code works once');

  const att = await t.api('GET', `/api/v1/me/chatapp/binding-attempts/${a.body.data.id}`, { token: u.key });
  assert.equal(att.body.data.status, 'bound');
  const b = await t.api('GET', '/api/v1/me/chatapp/binding', { token: u.key });
  assert.deepEqual([b.body.data.bound, b.body.data.chatUserId, b.body.data.displayName], [true, 'tg-42', 'Henry on chat']);
  const all = await t.api('GET', '/api/v1/me/bindings', { token: u.key });
  assert.deepEqual([all.body.data.chatapp.chatUserId, all.body.data.identities, all.body.data.phone], ['tg-42', [], null]);

  // The same chat account cannot be bound to a second hub account.
  const v = await t.user();
  const a2 = await t.api('POST', '/api/v1/me/chatapp/binding-attempts', { token: v.key });
  assert.equal((await confirm({ code: a2.body.data.code, chatUserId: 'tg-42' }, BOT_SECRET)).status, 409);
  assert.equal((await t.api('GET', `/api/v1/me/chatapp/binding-attempts/${a2.body.data.id}`, { token: u.key })).status, 404, "another account's attempt");

  assert.equal((await t.api('DELETE', '/api/v1/me/chatapp/binding', { token: u.key })).status, 200);
  assert.equal((await t.api('DELETE', '/api/v1/me/chatapp/binding', { token: u.key })).status, 404);
  assert.equal((await t.api('GET', '/api/v1/me/chatapp/binding', { token: u.key })).body.data.bound, false);
});

test('chat platform: an attempt expires', async () => {
  const u = await t.user();
  const a = await t.api('POST', '/api/v1/me/chatapp/binding-attempts', { token: u.key });
  await t.hub.ctx.em().execute(`update chatapp_attempts set expires_at = now() - interval '1 second' where id = ?`, [a.body.data.id]);
  assert.equal((await t.api('GET', `/api/v1/me/chatapp/binding-attempts/${a.body.data.id}`, { token: u.key })).body.data.status, 'expired');
  const r = await t.api('POST', '/api/v1/chatapp/confirm', { body: { code: a.body.data.code, chatUserId: 'tg-7' }, headers: { 'x-chatapp-secret': BOT_SECRET } });
  assert.equal(r.status, 404);
  for (const p of ['/api/v1/me/bindings', '/api/v1/me/chatapp/binding', '/api/v1/me/chatapp/binding-attempts/x']) assert.equal((await t.api('GET', p)).status, 401);
});

test('card reveal: an account with a bound phone must pass a fresh phone code as verifyToken', async () => {
  const u = await t.user();
  await t.api('POST', `/api/v1/admin/users/${u.id}/grant-token`, { token: t.adminKey, body: { qty: 5 } });
  const r = await t.api('POST', '/api/v1/store/redeem', { token: u.key, body: { productId: 'coffee-voucher' } });
  await t.api('POST', `/api/v1/admin/redeems/${r.body.data.id}/deliver`, { token: t.adminKey, body: { cards: [{ no: 'N1', pwd: 'P1' }] } });

  await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13600000005' } });
  await t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone: '13600000005', code: lastCodeFor('13600000005') } });

  const path = `/api/v1/me/redeems/${r.body.data.id}/cards`;
  assert.equal((await t.api('POST', path, { token: u.key, body: {} })).status, 403);
  assert.equal((await t.api('POST', path, { token: u.key, body: { verifyToken: '999999x' } })).status, 403);
  await ageCodes();
  await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13600000005' } });
  const ok = await t.api('POST', path, { token: u.key, body: { verifyToken: lastCodeFor('13600000005') } });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body.data.cards, [{ no: 'N1', pwd: 'P1' }]);
  assert.equal((await t.api('POST', path, { token: u.key, body: { verifyToken: lastCodeFor('13600000005') } })).status, 403, 'the code was consumed');
});

test('without SMS_WEBHOOK_URL / CHATAPP_WEBHOOK_SECRET: 503 NOT_CONFIGURED', async () => {
  const bare = await startTestHub();
  try {
    const u = await bare.user();
    const r = await bare.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13800000009' } });
    assert.deepEqual([r.status, r.body.code], [503, '5031']);
    const c = await bare.api('POST', '/api/v1/chatapp/confirm', { body: { code: 'ABCDEFGH', chatUserId: 'x' }, headers: { 'x-chatapp-secret': 'x' } });
    assert.deepEqual([c.status, c.body.code], [503, '5031']);
  } finally {
    await bare.close();
  }
});
