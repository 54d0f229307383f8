// the per-number limit (SMS_PER_NUMBER_PER_HOUR, "whoever asks") counts the number's
// own account with everyone else. A stranger who knows a user's bound phone asks for codes to it from a
// few accounts (each may, once a minute) and spends the number's hourly quota: the user then cannot get
// a code to the phone bound to their own account — no step-up (card reveals, changing the phone) — for
// as long as the stranger keeps spending it (10 texts an hour). The cap on strangers' texts must not
// lock out the account the number is bound to (e.g. its own codes counted apart, or the cap applied only
// to callers the number is not bound to).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { startTestHub, type TestHub } from './helpers/hub.js';
import { startSmsWebhook, type SmsWebhook } from './helpers/sms.js';
import { SMS_PER_NUMBER_PER_HOUR } from '../src/accounts/phone.js';

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

test('strangers spending a number\'s hourly quota do not lock its own account out of its step-up codes', async () => {
  const phone = `139${String(randomInt(0, 1e8)).padStart(8, '0')}`; // fresh: the limiter's window is an hour in Redis
  const owner = await t.user();
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: owner.key, body: { phone } })).status, 200);
  const bound = await t.api('POST', '/api/v1/me/phone/bind', { token: owner.key, body: { phone, code: sms.lastCodeFor(phone) } });
  assert.equal(bound.status, 200, bound.text);

  // A stranger, from several accounts, asks for codes to the owner's number until it is refused.
  for (let i = 0; i < SMS_PER_NUMBER_PER_HOUR; i++) {
    const u = await t.user();
    await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone } });
  }

  // The owner needs a code to its bound phone (the step-up before a card reveal).
  const mine = await t.api('POST', '/api/v1/me/phone/send-code', { token: owner.key, body: { phone } });
  assert.equal(mine.status, 200, `the account the number is bound to was refused its own step-up code (${mine.status}: ${mine.text}) after strangers spent the number's quota`);
});
