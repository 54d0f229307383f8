// POST /me/phone/send-code is limited per account (5 an hour) and per number per account (one a
// minute), so many accounts together sent a number as many codes as they liked: a stranger's phone
// flooded with texts, each paid for by the operator (and any number, any country code: toll fraud).
// A number is sent at most SMS_PER_NUMBER_PER_HOUR codes an hour, whoever asks.
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

test(`a number is sent at most ${SMS_PER_NUMBER_PER_HOUR} codes an hour, however many accounts ask`, async () => {
  const victim = `137${String(randomInt(0, 1e8)).padStart(8, '0')}`; // fresh: a limiter window lives an hour
  const statuses: number[] = [];
  for (let i = 0; i < SMS_PER_NUMBER_PER_HOUR + 3; i++) {
    const u = await t.user();
    statuses.push((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: victim } })).status);
  }
  assert.deepEqual(statuses.filter((s) => s === 200).length, SMS_PER_NUMBER_PER_HOUR, JSON.stringify(statuses));
  assert.ok(statuses.slice(SMS_PER_NUMBER_PER_HOUR).every((s) => s === 429), JSON.stringify(statuses));
  // Another number is not held back by it.
  const u = await t.user();
  assert.equal((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: { phone: `${victim.slice(0, -1)}${(Number(victim.at(-1)) + 1) % 10}` } })).status, 200);
});
