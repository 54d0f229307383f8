// The Account page's bindings in detail, in a real Chromium: the phone form (a blank number waits, the
// number taken trimmed, "Sending…" and "Binding…" held, the number fixed once a code went and "Change
// number" going back, the bound phone with its country code); changing it (the current phone's code:
// its own "Sending…", a second one refused when too soon and sent once allowed; Bind waits for it);
// the chat platform (the code with its expiry, Cancel, a code expired and polled no more, an attempt
// replaced in another tab, a bot's confirmation without a display name, an unbind refused after
// another tab unbound).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestHub } from './helpers/hub.js';
import { ageCodes, type SmsWebhook } from './helpers/sms.js';
import { bindingsOf, openAccountConsole } from './helpers/account-console.js';
import { closeConsoleTest, holdNext, noBrowser, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const BOT_SECRET = 'bot-secret-details';
const PHONE = '13800000021';
const NEW = '13800000022';
let sms: SmsWebhook;
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

const sendCode = (url: URL, method: string) => method === 'POST' && url.pathname === '/api/v1/me/phone/send-code';
const smsTo = (phone: string) => sms.inbox.filter((m) => JSON.stringify(m).includes(phone)).length;

before(async () => {
  if (skip) return;
  ({ sms, t, u, tab } = await openAccountConsole('detailer', BOT_SECRET));
});

after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, {
    failedLoadsProvoked: true, // the refusals
    then: [() => t.close(), () => sms.close()],
  });
});

test('binding a phone: a blank number waits, "Sending…" and "Binding…" held, the number fixed once sent, "Change number" goes back', { skip }, async () => {
  const { page } = tab;
  const b = bindingsOf(tab);
  await b.getByText('No phone bound.').waitFor();
  await b.getByRole('button', { name: 'Bind a phone' }).click();
  const form = b.getByRole('form', { name: 'Bind a phone' });
  await form.getByLabel('Phone number').fill('   ');
  assert.ok(await form.getByRole('button', { name: 'Send code' }).isDisabled(), 'nothing to send to');
  await form.getByLabel('Phone number').fill(` ${PHONE} `);
  let release = await holdNext(page, sendCode);
  await form.getByRole('button', { name: 'Send code' }).click();
  const sending = form.getByRole('button', { name: 'Sending…' });
  await sending.waitFor();
  assert.ok(await sending.isDisabled());
  await release();
  const code = form.getByLabel(`Code sent to +86 ${PHONE}`);
  await code.waitFor();
  assert.equal(smsTo(PHONE), 1, 'sent to the number without its spaces');
  assert.ok(await form.getByLabel('Phone number').isDisabled(), 'the number the code went to stays');
  assert.ok(await form.getByLabel('Country code').isDisabled());
  assert.ok(await form.getByRole('button', { name: 'Bind phone' }).isDisabled(), 'no code typed yet');

  // Change number: back to the number, the code field gone.
  await form.getByRole('button', { name: 'Change number' }).click();
  await form.getByRole('button', { name: 'Send code' }).waitFor();
  assert.ok(!(await form.getByLabel('Phone number').isDisabled()));
  assert.equal(await form.getByLabel(/^Code sent to/).count(), 0);

  await ageCodes(t);
  await form.getByRole('button', { name: 'Send code' }).click();
  await code.waitFor();
  await code.fill(sms.lastCodeFor(PHONE));
  release = await holdNext(page, (url, method) => method === 'POST' && url.pathname === '/api/v1/me/phone/bind');
  await form.getByRole('button', { name: 'Bind phone' }).click();
  const binding = form.getByRole('button', { name: 'Binding…' });
  await binding.waitFor();
  assert.ok(await binding.isDisabled());
  assert.ok(await form.getByRole('button', { name: 'Change number' }).isDisabled());
  await release();
  const bound = b.locator('[data-phone="138****0021"]');
  await bound.waitFor();
  assert.match((await bound.textContent())!, /^\+86 138\*\*\*\*0021 Change phone$/);
});

test('changing the phone: the current phone\'s code "Sending…", refused when too soon, sent again once allowed; Bind waits for it', { skip }, async () => {
  const { page } = tab;
  const b = bindingsOf(tab);
  await b.getByRole('button', { name: 'Change phone' }).click();
  const form = b.getByRole('form', { name: 'Bind a phone' });
  const cur = form.getByRole('group', { name: 'Current phone' });
  assert.ok(await cur.getByRole('button', { name: 'Send code to current phone' }).isDisabled(), 'nothing to send to');
  await cur.getByLabel('Current phone number').fill(` ${PHONE} `);
  await ageCodes(t);
  const before = smsTo(PHONE);
  const release = await holdNext(page, sendCode);
  await cur.getByRole('button', { name: 'Send code to current phone' }).click();
  await cur.getByRole('button', { name: 'Sending…' }).waitFor();
  await release();
  await cur.getByLabel('Code sent to your current phone').waitFor();
  assert.equal(smsTo(PHONE), before + 1, 'sent to the number without its spaces');
  assert.ok(await cur.getByLabel('Current phone number').isDisabled());
  assert.ok(await cur.getByLabel('Its country code').isDisabled());

  // Another at once is the hub's to refuse, said in the current phone's part; once allowed it goes.
  await cur.getByRole('button', { name: 'Send again' }).click();
  assert.match((await cur.getByRole('alert').textContent())!, /\(429, code \d+\)/);
  await ageCodes(t);
  // The hub answers once the SMS relay took the message: wait for that answer, not for the alert (it goes at the click).
  const answered = page.waitForResponse((r) => sendCode(new URL(r.url()), r.request().method()));
  await cur.getByRole('button', { name: 'Send again' }).click();
  assert.equal((await answered).status(), 200);
  assert.equal(await cur.getByRole('alert').count(), 0);
  assert.equal(smsTo(PHONE), before + 2);

  // The current phone's code first (the form asks for it), then the new number's.
  const curCode = cur.getByLabel('Code sent to your current phone');
  await curCode.fill(sms.lastCodeFor(PHONE));
  await form.getByLabel('Phone number', { exact: true }).fill(NEW);
  await ageCodes(t);
  await form.getByRole('button', { name: 'Send code', exact: true }).click();
  const newCode = form.getByLabel(`Code sent to +86 ${NEW}`);
  await newCode.waitFor();
  await newCode.fill(sms.lastCodeFor(NEW));
  const bind = form.getByRole('button', { name: 'Bind phone' });
  await curCode.fill(' ');
  assert.ok(await bind.isDisabled(), 'the current phone\'s code is missing');
  await curCode.fill(sms.lastCodeFor(PHONE));
  await bind.click();
  await b.locator('[data-phone="138****0022"]').waitFor();
});

test('the chat platform: the code with its expiry and Cancel; a code expired, polled no more; an attempt replaced in another tab', { skip }, async () => {
  const { page } = tab;
  const b = bindingsOf(tab);
  const made = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/me/chatapp/binding-attempts');
  await b.getByRole('button', { name: 'Bind the chat platform' }).click();
  const attempt = (await (await made).json()).data;
  const panel = b.locator(`[data-attempt="${attempt.id}"]`);
  const until = await page.evaluate((at) => new Date(at).toLocaleString(), attempt.expiresAt);
  await panel.getByText(`Send this code to the hub's bot on the chat platform (before ${until}):`).waitFor();
  await panel.getByRole('status').filter({ hasText: 'Waiting for the bot to confirm the code…' }).waitFor();
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await panel.waitFor({ state: 'detached' });

  // Expired: said, with Close, and not asked about again.
  await b.getByRole('button', { name: 'Bind the chat platform' }).click();
  const second = b.locator('[data-attempt]');
  await second.waitFor();
  await t.hub.ctx.em().execute(`update chatapp_attempts set expires_at = now() - interval '1 second' where user_id = ?`, [u.id]);
  await second.getByText('The code expired.').waitFor();
  let polls = 0;
  const count = (r: { url(): string }) => { if (new URL(r.url()).pathname.startsWith('/api/v1/me/chatapp/binding-attempts/')) polls++; };
  page.on('request', count);
  await page.waitForTimeout(4500); // two poll periods
  page.off('request', count);
  assert.equal(polls, 0, 'an expired code is not polled');
  assert.equal(await second.getByText('Waiting for the bot').count(), 0);
  await second.getByRole('button', { name: 'Close' }).click();
  await second.waitFor({ state: 'detached' });

  // Started again in another tab: this tab's attempt is gone, and its poll says so.
  await b.getByRole('button', { name: 'Bind the chat platform' }).click();
  const third = b.locator('[data-attempt]');
  await third.waitFor();
  await t.client(u.key).bindings.chatappAttempt();
  assert.match((await third.getByRole('alert').textContent())!, /\(404, code 4040\)/);
  await third.getByRole('button', { name: 'Cancel' }).click();
});

test('the chat platform bound by a bot that gives no display name shows the chat user and since when; an unbind after another tab\'s is refused', { skip }, async () => {
  const b = bindingsOf(tab);
  await b.getByRole('button', { name: 'Bind the chat platform' }).click();
  const code = (await b.locator('[data-chatapp-code]').textContent())!.trim();
  const ok = await t.api('POST', '/api/v1/chatapp/confirm', { body: { code, chatUserId: 'chat-88' }, headers: { 'x-chatapp-secret': BOT_SECRET } });
  assert.equal(ok.status, 200, ok.text);
  const shown = b.locator('[data-chatapp-bound]');
  await shown.waitFor();
  const boundAt = (await t.client(u.key).bindings.chatapp()).boundAt;
  const since = await tab.page.evaluate((at) => new Date(at!).toLocaleString(), boundAt);
  assert.equal((await shown.textContent())!.trim(), `chat-88 (since ${since})`);

  // Unbound in another tab: this one's Unbind is refused, said beside it.
  assert.ok((await t.api('DELETE', '/api/v1/me/chatapp/binding', { token: u.key })).status < 300);
  tab.page.once('dialog', (d) => void d.accept());
  await b.getByRole('button', { name: 'Unbind' }).click();
  assert.match((await b.getByRole('alert').textContent())!, /no chat-platform binding \(404, code 4040\)/);
});
