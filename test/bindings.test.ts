// Phone binding through a real local SMS webhook, the chat-platform binding
// and its bot confirmation, the bindings view, and the phone step-up of card reveals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { apiError, failure } from './helpers/api-error.js';
import { ageCodes, startSmsWebhook, type SmsWebhook } from './helpers/sms.js';
import { rowLock } from './helpers/row-lock.js';

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

test('phone: send a code through the webhook, bind with it; the code is stored hashed', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const s = await c.bindings.sendPhoneCode('13800000001', '86');
  assert.deepEqual([s.sent, s.countryCode], [true, '+86']);
  const msg = sms.inbox.at(-1);
  assert.deepEqual([msg.to, msg.phone, msg.countryCode], ['+8613800000001', '13800000001', '+86']);
  assert.match(msg.code, /^\d{6}$/);
  const rows = await t.hub.ctx.em().execute(`select code_hash from phone_codes where user_id = ?`, [u.id]);
  assert.ok(rows.length === 1 && !rows[0].code_hash.includes(msg.code));

  await assert.rejects(c.bindings.bindPhone('13800000001', msg.code === '000000' ? '111111' : '000000', '+86'), apiError(400));
  const ok = await c.bindings.bindPhone('13800000001', msg.code, '+86');
  assert.deepEqual(ok.phone, { countryCode: '+86', number: '138****0001' });
  await assert.rejects(c.bindings.bindPhone('13800000001', msg.code), apiError(400), 'a code works once');
  const me = await c.me();
  assert.equal(me.phone, '138****0001');

  // Another account cannot take the same number: told so at bind, once its code proved it holds the phone
  // (send-code answers as for any number: test/security-phone-codes.test.ts).
  const v = await t.user();
  await t.client(v.key).bindings.sendPhoneCode('13800000001');
  await assert.rejects(t.client(v.key).bindings.bindPhone('13800000001', lastCodeFor('13800000001')), apiError(409));
  assert.equal((await c.me()).phone, '138****0001');
});

test('phone: resend waits a minute (429), five wrong codes lock the code, expired codes are refused', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const phone = '13900000002';
  await c.bindings.sendPhoneCode(phone);
  await assert.rejects(c.bindings.sendPhoneCode(phone), apiError(429));
  // The Retry-After header: raw.
  const again = await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone } });
  assert.equal(again.status, 429);
  assert.ok(Number(again.headers.get('retry-after')) > 0);
  const code = lastCodeFor(phone);
  const bad = code === '000000' ? '111111' : '000000';
  for (let i = 0; i < 5; i++) await assert.rejects(c.bindings.bindPhone(phone, bad), apiError(400));
  await assert.rejects(c.bindings.bindPhone(phone, code), apiError(400), 'the right code no longer works after five wrong ones');

  await ageCodes(t);
  await c.bindings.sendPhoneCode(phone);
  await t.hub.ctx.em().execute(`update phone_codes set expires_at = now() - interval '1 second' where user_id = ?`, [u.id]);
  await assert.rejects(c.bindings.bindPhone(phone, lastCodeFor(phone)), apiError(400));
  // A code sent for one number does not bind another.
  await ageCodes(t);
  await c.bindings.sendPhoneCode(phone);
  await assert.rejects(c.bindings.bindPhone('13900000003', lastCodeFor(phone)), apiError(400));
});

// Audit by mutation (fifty-second session): the attempt count's conditions had no test. Guesses that all read
// the code before any of them counted (a burst in parallel) must still be counted one by one: else a burst of
// a thousand guesses at a step-up code all get judged. The row lock that lines them up needs PostgreSQL.
test('phone: guesses lined up past their reads still count one by one; a right code whose check five wrong ones overtook is refused', { skip: !process.env.DATABASE_URL && 'needs PostgreSQL (DATABASE_URL)' }, async () => {
  const u = await t.user();
  const phone = '13900000005';
  await t.client(u.key).bindings.sendPhoneCode(phone);
  const code = lastCodeFor(phone);
  const bad = code === '000000' ? '111111' : '000000';
  const bind = (c: string) => t.api('POST', '/api/v1/me/phone/bind', { token: u.key, body: { phone, code: c } }).then((r) => `${r.status} ${r.body.message}`);
  const lock = await rowLock(t.config.databaseUrl!);
  /** Holds the code's row while `queued` are sent and `n` of them reach it (`like`); `meanwhile` runs in the holding transaction. */
  const lined = async <T>(queued: () => Promise<T>, like: string, n: number, meanwhile?: string): Promise<T> => {
    await lock.hold(`select 1 from phone_codes where user_id = $1 for update`, [u.id]);
    const out = queued();
    try {
      await lock.until(like, n);
      if (meanwhile) await lock.query(meanwhile, [u.id]);
    } finally {
      await lock.release();
    }
    return out;
  };
  try {
    // Eight wrong guesses that all read the code before any counted: five judged, three refused.
    const answers = await lined(() => Promise.all(Array.from({ length: 8 }, () => bind(bad))), 'update phone_codes set attempts%', 8);
    assert.equal(answers.filter((a) => a === '400 body/code: wrong code').length, 5, answers.join(' | '));
    assert.equal(answers.filter((a) => /too many wrong codes/.test(a)).length, 3, answers.join(' | '));

    // A fresh code; its right guess checked, then five wrong ones land before it is spent.
    await ageCodes(t);
    await t.client(u.key).bindings.sendPhoneCode(phone);
    const right = lined(() => bind(lastCodeFor(phone)), 'delete from phone_codes%', 1, `update phone_codes set attempts = 5 where user_id = $1`);
    assert.match(await right, /^400 too many wrong codes/);
  } finally {
    await lock.close();
  }
  assert.equal((await t.client(u.key).me()).phone, null, 'nothing bound');
});

test('phone: validation, credentials, and a failing relay → 503', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  // No phone is sent as {} (the client drops undefined fields).
  for (const [phone, cc] of [[undefined, undefined], ['abc'], ['12'], ['13800000000', '+12345']] as Array<[string | undefined, string?]>) {
    await assert.rejects(c.bindings.sendPhoneCode(phone as string, cc), apiError(400), JSON.stringify([phone, cc]));
  }
  // An unknown field: outside the typed shape.
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: '13800000000', x: 1 } })).status, 400);
  await assert.rejects(c.bindings.bindPhone('13800000000', undefined as unknown as string), apiError(400));
  await assert.rejects(t.client().bindings.sendPhoneCode('13800000000'), apiError(401));
  sms.failNext = true;
  await assert.rejects(c.bindings.sendPhoneCode('13700000004'), apiError(503));
  // The failed send left no code behind and does not count for the resend wait.
  await c.bindings.sendPhoneCode('13700000004');
});

// The bot's confirmation is the chat platform's webhook (a shared-secret header, no account): raw.
const confirm = (body: unknown, secret?: string) => t.api('POST', '/api/v1/chatapp/confirm', { body, headers: secret ? { 'x-chatapp-secret': secret } : {} });

test('chat platform: attempt → bot confirms the code with the shared secret → bound; unbind', async () => {
  const u = await t.user('henry');
  const c = t.client(u.key);
  const empty = await c.bindings.chatapp();
  assert.equal(empty.bound, false);
  const a = await c.bindings.chatappAttempt();
  assert.match(a.code, /^[A-Z2-9]{8}$/);
  assert.equal(a.status, 'pending');
  assert.equal((await c.bindings.chatappAttemptState(a.id)).status, 'pending');

  assert.equal((await confirm({ code: a.code, chatUserId: 'tg-42' })).status, 401);
  assert.equal((await confirm({ code: a.code, chatUserId: 'tg-42' }, 'wrong')).status, 401);
  assert.equal((await confirm({ code: 'NOPE2345', chatUserId: 'tg-42' }, BOT_SECRET)).status, 404);
  assert.equal((await confirm({ code: a.code }, BOT_SECRET)).status, 400);
  const ok = await confirm({ code: a.code.toLowerCase(), chatUserId: 'tg-42', displayName: 'Henry on chat' }, BOT_SECRET);
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual([ok.body.data.bound, ok.body.data.userName], [true, 'henry']);
  assert.equal((await confirm({ code: a.code, chatUserId: 'tg-42' }, BOT_SECRET)).status, 404, 'a code works once');

  const att = await c.bindings.chatappAttemptState(a.id);
  assert.equal(att.status, 'bound');
  const b = await c.bindings.chatapp();
  assert.deepEqual([b.bound, b.chatUserId, b.displayName], [true, 'tg-42', 'Henry on chat']);
  const all = await c.bindings.get();
  assert.deepEqual([all.chatapp.chatUserId, all.identities, all.phone], ['tg-42', [], null]);

  // The same chat account cannot be bound to a second hub account.
  const v = await t.user();
  const a2 = await t.client(v.key).bindings.chatappAttempt();
  assert.equal((await confirm({ code: a2.code, chatUserId: 'tg-42' }, BOT_SECRET)).status, 409);
  await assert.rejects(c.bindings.chatappAttemptState(a2.id), apiError(404), "another account's attempt");

  assert.deepEqual(await c.bindings.unbindChatapp(), { deleted: true });
  await assert.rejects(c.bindings.unbindChatapp(), apiError(404));
  assert.equal((await c.bindings.chatapp()).bound, false);
});

test("chat platform: a new attempt replaces the account's pending one; binding another chat account moves the binding and frees the old one", async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const first = await c.bindings.chatappAttempt();
  const second = await c.bindings.chatappAttempt();
  assert.equal((await confirm({ code: first.code, chatUserId: 'tg-100' }, BOT_SECRET)).status, 404, 'the replaced code binds nothing');
  assert.equal((await confirm({ code: second.code, chatUserId: 'tg-100' }, BOT_SECRET)).status, 200);

  const third = await c.bindings.chatappAttempt();
  const moved = await confirm({ code: third.code, chatUserId: 'tg-101' }, BOT_SECRET);
  assert.equal(moved.status, 200, moved.text);
  assert.equal((await c.bindings.chatapp()).chatUserId, 'tg-101');
  // The chat account left behind is free for another hub account.
  const v = await t.user();
  const other = await t.client(v.key).bindings.chatappAttempt();
  assert.equal((await confirm({ code: other.code, chatUserId: 'tg-100' }, BOT_SECRET)).status, 200);
  assert.equal((await t.client(v.key).bindings.chatapp()).chatUserId, 'tg-100');
});

test('chat platform: an attempt expires', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const a = await c.bindings.chatappAttempt();
  await t.hub.ctx.em().execute(`update chatapp_attempts set expires_at = now() - interval '1 second' where id = ?`, [a.id]);
  assert.equal((await c.bindings.chatappAttemptState(a.id)).status, 'expired');
  assert.equal((await confirm({ code: a.code, chatUserId: 'tg-7' }, BOT_SECRET)).status, 404);
  const anon = t.client().bindings;
  for (const [name, call] of [['bindings', () => anon.get()], ['chatapp', () => anon.chatapp()], ['attempt', () => anon.chatappAttemptState('x')]] as const) {
    await assert.rejects(call(), apiError(401), name);
  }
});

test('card reveal: an account with a bound phone must pass a fresh phone code as verifyToken', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  await t.admin.admin.grantTokens(u.id, 5);
  const r = await c.billing.redeem('coffee-voucher');
  await t.admin.admin.deliverRedeem(r.id, [{ no: 'N1', pwd: 'P1' }]);

  await c.bindings.sendPhoneCode('13600000005');
  await c.bindings.bindPhone('13600000005', lastCodeFor('13600000005'));

  await assert.rejects(c.billing.cards(r.id), apiError(403));
  await assert.rejects(c.billing.cards(r.id, '999999x'), apiError(403));
  await ageCodes(t);
  await c.bindings.sendPhoneCode('13600000005');
  const ok = await c.billing.cards(r.id, lastCodeFor('13600000005'));
  assert.deepEqual(ok.cards, [{ no: 'N1', pwd: 'P1' }]);
  await assert.rejects(c.billing.cards(r.id, lastCodeFor('13600000005')), apiError(403), 'the code was consumed');
});

test('phone: changing a bound phone needs a fresh code of the current one (verifyToken); a stolen key alone cannot move the step-up', async () => {
  // Without it, a stolen API key could bind the attacker's phone over the owner's and then pass the
  // card reveal's step-up with codes sent to that phone.
  const u = await t.user();
  const c = t.client(u.key);
  const [mine, theirs] = ['13500000011', '13500000012'];
  await c.bindings.sendPhoneCode(mine);
  await c.bindings.bindPhone(mine, lastCodeFor(mine));

  await c.bindings.sendPhoneCode(theirs); // another number: no wait behind the first number's code
  const newCode = lastCodeFor(theirs);
  await assert.rejects(c.bindings.bindPhone(theirs, newCode), apiError(403));
  await assert.rejects(c.bindings.bindPhone(theirs, newCode, undefined, '000000'), apiError(403));
  assert.equal((await c.me()).phone, '135****0011', 'still the owner\'s phone');

  await c.bindings.sendPhoneCode(mine);
  // A wrong code for the new number: 400, and the current phone's code is not spent by it.
  await assert.rejects(c.bindings.bindPhone(theirs, newCode === '000000' ? '111111' : '000000', undefined, lastCodeFor(mine)), apiError(400));
  const ok = await c.bindings.bindPhone(theirs, newCode, undefined, lastCodeFor(mine));
  assert.deepEqual(ok.phone, { countryCode: '+86', number: '135****0012' });
  // Binding the number already bound again needs no second code (nothing moves).
  await ageCodes(t);
  await c.bindings.sendPhoneCode(theirs);
  await c.bindings.bindPhone(theirs, lastCodeFor(theirs));
});

test('phone: the same digits under another country code are another number: moving to them needs the verifyToken too', async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const digits = '13500000021';
  await c.bindings.sendPhoneCode(digits, '+86');
  await c.bindings.bindPhone(digits, lastCodeFor(digits), '+86');
  await c.bindings.sendPhoneCode(digits, '+44');
  await assert.rejects(c.bindings.bindPhone(digits, lastCodeFor(digits), '+44'), apiError(403));
  assert.deepEqual((await c.me()).phone, '135****0021');
  assert.equal((await c.bindings.get()).phone?.countryCode, '+86', 'still the +86 number');
});

test("phone: a new number's code locked by wrong tries is refused as locked, and the current phone's code passed with it is not spent", async () => {
  const u = await t.user();
  const c = t.client(u.key);
  const [mine, theirs] = ['13500000031', '13500000032'];
  await c.bindings.sendPhoneCode(mine);
  await c.bindings.bindPhone(mine, lastCodeFor(mine));
  await ageCodes(t);
  await c.bindings.sendPhoneCode(mine);
  const stepUp = lastCodeFor(mine);
  await c.bindings.sendPhoneCode(theirs);
  const newCode = lastCodeFor(theirs);
  const wrong = newCode === '000000' ? '111111' : '000000';
  for (let i = 0; i < 5; i++) await assert.rejects(c.bindings.bindPhone(theirs, wrong, undefined, stepUp), apiError(400));
  const locked = await failure(c.bindings.bindPhone(theirs, newCode, undefined, stepUp));
  assert.equal(locked.status, 400);
  assert.match(locked.message, /too many wrong codes/);
  // A fresh code of the new number, with the same step-up code: it was not spent by the refusals.
  await ageCodes(t);
  await c.bindings.sendPhoneCode(theirs);
  const ok = await c.bindings.bindPhone(theirs, lastCodeFor(theirs), undefined, stepUp);
  assert.deepEqual(ok.phone, { countryCode: '+86', number: '135****0032' });
});

test('without SMS_WEBHOOK_URL / CHATAPP_WEBHOOK_SECRET: 503 NOT_CONFIGURED', async () => {
  const bare = await startTestHub();
  try {
    const u = await bare.user();
    await assert.rejects(bare.client(u.key).bindings.sendPhoneCode('13800000009'), apiError(503, '5031'));
    // The chat platform's webhook: raw.
    const c = await bare.api('POST', '/api/v1/chatapp/confirm', { body: { code: 'ABCDEFGH', chatUserId: 'x' }, headers: { 'x-chatapp-secret': 'x' } });
    assert.deepEqual([c.status, c.body.code], [503, '5031']);
  } finally {
    await bare.close();
  }
});
