// Who learns what, and who pays, through POST /me/phone/send-code:
// - a number bound to another account is answered as any other (its 409 told anyone which numbers have
//   an account, before any code proved the caller holds the phone; bind refuses it after the code);
// - one number is sent at most SMS_PER_NUMBER_PER_HOUR codes an hour whoever asks (the limits were per
//   account, so many accounts together flooded a stranger's phone with texts the operator paid for);
// - and the account the number is bound to is not counted with strangers (they could spend the
//   number's quota and keep its owner from its step-up codes for as long as they liked).
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

test('spellings of one number (trunk zeros, a zero-padded or split country code) share its hourly count', async () => {
  const victim = `136${String(randomInt(0, 1e8)).padStart(8, '0')}`;
  const spellings = [
    { phone: victim }, { phone: `0${victim}` }, { phone: `00${victim}`, countryCode: '86' }, { phone: victim, countryCode: '+0086' },
    { phone: `6${victim}`, countryCode: '+8' },
  ];
  const statuses: number[] = [];
  for (let i = 0; i < SMS_PER_NUMBER_PER_HOUR + 2; i++) {
    const u = await t.user();
    statuses.push((await t.api('POST', '/api/v1/me/phone/send-code', { token: u.key, body: spellings[i % spellings.length] })).status);
  }
  assert.equal(statuses.filter((s) => s === 200).length, SMS_PER_NUMBER_PER_HOUR, JSON.stringify(statuses));
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
