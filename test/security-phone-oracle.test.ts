// Audit (sign-in): POST /me/phone/send-code answers 409 "bound to another
// account" for a number someone else has bound, before any proof that the
// caller holds that phone, and without sending anything; an unbound number
// gets 200 and a code. So any account learns, for any phone number, whether
// it belongs to an Agent Hub account (an existence oracle on phone numbers).
// The conflict belongs at bind, after the code has proved the caller holds the phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startSmsWebhook, type SmsWebhook } from './helpers/sms.js';

let sms: SmsWebhook;
let t: TestHub;
before(async () => {
  sms = await startSmsWebhook();
  t = await startTestHub({ rateLimitPhoneCodePerHour: 0 }, { SMS_WEBHOOK_URL: sms.url });
});
after(async () => {
  await t.close();
  await sms.close();
});

test('send-code answers a number bound to another account as it answers an unbound one', async () => {
  const owner = await t.user('phone-owner');
  const c = t.client(owner.key);
  await c.bindings.sendPhoneCode('13700000101');
  await c.bindings.bindPhone('13700000101', sms.lastCodeFor('13700000101'));

  const prober = await t.user('phone-prober');
  const bound = await t.api('POST', '/api/v1/me/phone/send-code', { token: prober.key, body: { phone: '13700000101' } });
  const unbound = await t.api('POST', '/api/v1/me/phone/send-code', { token: prober.key, body: { phone: '13700000102' } });
  assert.equal(unbound.status, 200);
  assert.equal(bound.status, unbound.status, `a bound number answered ${bound.status} ${JSON.stringify(bound.body)}, an unbound one ${unbound.status}`);
  assert.deepEqual(Object.keys(bound.body?.data ?? {}).sort(), Object.keys(unbound.body.data).sort());

  // The owner's phone stays the owner's: binding it needs the code sent to it.
  const p = t.client(prober.key);
  const wrong = await t.api('POST', '/api/v1/me/phone/bind', { token: prober.key, body: { phone: '13700000101', code: '000000' } });
  assert.ok(wrong.status >= 400 && wrong.status < 500);
  assert.equal((await p.me()).phone, null);
  assert.equal((await c.me()).phone, '137****0101');
});
