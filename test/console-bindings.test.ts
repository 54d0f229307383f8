// The Account page's bindings and redemptions in a real Chromium: a phone bound
// with the code the hub sent to a local SMS webhook; the chat platform bound
// (the bot confirms the code shown) and unbound; a delivered redemption's cards
// revealed after the phone step-up, and marked read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestHub } from './helpers/hub.js';
import { ageCodes, type SmsWebhook } from './helpers/sms.js';
import { bindingsOf, openAccountConsole } from './helpers/account-console.js';
import { closeConsoleTest, answerNextDialog, noBrowser, shot, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const BOT_SECRET = 'bot-secret-console';
const PHONE = '13800000007';
let sms: SmsWebhook;
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

before(async () => {
  if (skip) return;
  ({ sms, t, u, tab } = await openAccountConsole('binder', BOT_SECRET, { starterTokens: 5000 }));
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { then: [() => t.close(), () => sms.close()] });
});

test('binding a phone: send a code, enter the code the SMS carried, the phone is bound', { skip }, async () => {
  const b = bindingsOf(tab);
  await b.getByText('No phone bound.').waitFor();
  await b.getByRole('button', { name: 'Bind a phone' }).click();
  const form = b.getByRole('form', { name: 'Bind a phone' });
  await form.getByLabel('Phone number').fill(PHONE);
  await form.getByRole('button', { name: 'Send code' }).click();
  const code = form.getByLabel('Code sent to +86 13800000007');
  await code.waitFor();
  // A wrong code: the hub's refusal shown as a sentence, the form stays.
  const right = sms.lastCodeFor(PHONE);
  assert.match(right, /^\d{6}$/);
  await code.fill(right === '000000' ? '111111' : '000000');
  await form.getByRole('button', { name: 'Bind phone' }).click();
  await form.getByRole('alert').filter({ hasText: 'wrong code (400, code 4000)' }).waitFor();
  await code.fill(right);
  await form.getByRole('button', { name: 'Bind phone' }).click();
  await b.locator('[data-phone="138****0007"]').waitFor();
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 400')), [], 'only the wrong code failed');
  tab.pageErrors.length = 0;
  const mine = await t.client(u.key).bindings.get();
  assert.deepEqual(mine.phone, { countryCode: '+86', number: '138****0007' });
  assert.deepEqual(tab.pageErrors, []);
});

test('binding the chat platform: the code shown, the bot confirms it, the page sees it bound; unbind', { skip }, async () => {
  const { page } = tab;
  const b = bindingsOf(tab);
  await b.getByRole('button', { name: 'Bind the chat platform' }).click();
  await b.getByRole('status').filter({ hasText: 'Waiting for the bot to confirm the code' }).waitFor();
  const code = (await b.locator('[data-chatapp-code]').textContent())!.trim();
  assert.match(code, /^[A-Z2-9]{8}$/);
  await shot(page, 'account-bindings');
  // The bot, on the chat platform's side, confirms the code the user sent it.
  const ok = await t.api('POST', '/api/v1/chatapp/confirm', { body: { code, chatUserId: 'chat-77', displayName: 'Binder on chat' }, headers: { 'x-chatapp-secret': BOT_SECRET } });
  assert.equal(ok.status, 200, ok.text);
  await b.locator('[data-chatapp-bound]').filter({ hasText: 'Binder on chat' }).waitFor();
  assert.equal((await t.client(u.key).bindings.chatapp()).chatUserId, 'chat-77');

  const asked = answerNextDialog(page, false);
  await b.getByRole('button', { name: 'Unbind' }).click();
  assert.equal(asked(), 'Unbind the chat platform account?');
  assert.equal((await t.client(u.key).bindings.chatapp()).bound, true, 'a dismissed unbind leaves it bound');
  page.once('dialog', (d) => void d.accept());
  await b.getByRole('button', { name: 'Unbind' }).click();
  await b.getByRole('button', { name: 'Bind the chat platform' }).waitFor();
  assert.equal((await t.client(u.key).bindings.chatapp()).bound, false);
  assert.deepEqual(tab.pageErrors, []);
});

test('a delivered redemption: cards revealed after a code to the bound phone, then marked read', { skip }, async () => {
  const { page } = tab;
  const me = t.client(u.key);
  const r = await me.billing.redeem('coffee-voucher');
  await t.admin.admin.deliverRedeem(r.id, [{ no: 'CARD-1', pwd: 'PIN-1' }, { no: 'CARD-2', pwd: 'PIN-2' }]);
  await page.reload();
  const row = page.locator(`tr[data-redeem="${r.id}"]`);
  await row.getByText('new', { exact: true }).waitFor();
  await row.getByRole('button', { name: 'Reveal cards' }).click();
  // The phone is bound, so the hub asks for a fresh code first.
  const verify = row.getByRole('form', { name: 'Verify to reveal Coffee voucher' });
  await verify.waitFor();
  assert.deepEqual(tab.pageErrors.filter((e) => !e.includes('status of 403')), [], 'only the first try without a code failed');
  tab.pageErrors.length = 0;
  await ageCodes(t);
  await verify.getByLabel('Bound phone number').fill(PHONE);
  const sent = sms.inbox.length;
  await verify.getByRole('button', { name: 'Send code' }).click();
  await verify.getByLabel('Code from the SMS').waitFor();
  assert.equal(sms.inbox.length, sent + 1, 'one more SMS');
  await verify.getByLabel('Code from the SMS').fill(sms.lastCodeFor(PHONE));
  await verify.getByRole('button', { name: 'Verify and reveal' }).click();
  const cards = row.getByRole('table', { name: 'Cards of Coffee voucher' });
  await cards.getByRole('cell', { name: 'CARD-2' }).waitFor();
  await cards.getByRole('cell', { name: 'PIN-1' }).waitFor();
  await shot(page, 'account-redemption-cards');
  // The code was spent on this reveal: the hub asks again for the next one.
  assert.equal((await t.api('POST', `/api/v1/me/redeems/${r.id}/cards`, { token: u.key, body: {} })).status, 403);

  assert.equal((await me.billing.redemption(r.id)).read, false);
  await row.getByRole('button', { name: 'Mark read' }).click();
  await row.getByRole('button', { name: 'Mark read' }).waitFor({ state: 'detached' });
  assert.equal((await me.billing.redemption(r.id)).read, true);
  assert.deepEqual(tab.pageErrors, []);
});

test('changing the phone: a code to the phone bound now, then the new number\'s code', { skip }, async () => {
  const b = bindingsOf(tab);
  await b.getByRole('button', { name: 'Change phone' }).click();
  const form = b.getByRole('form', { name: 'Bind a phone' });
  const NEW = '13800000008';
  const cur = form.getByRole('group', { name: 'Current phone' });
  await cur.getByLabel('Current phone number').fill(PHONE);
  await cur.getByRole('button', { name: 'Send code to current phone' }).click();
  const curCode = cur.getByLabel('Code sent to your current phone');
  await curCode.waitFor();
  await curCode.fill(sms.lastCodeFor(PHONE));
  await form.getByLabel('Phone number', { exact: true }).fill(NEW);
  await form.getByRole('button', { name: 'Send code', exact: true }).click();
  const newCode = form.getByLabel(`Code sent to +86 ${NEW}`);
  await newCode.waitFor();
  await newCode.fill(sms.lastCodeFor(NEW));
  await form.getByRole('button', { name: 'Bind phone' }).click();
  await b.locator('[data-phone="138****0008"]').waitFor();
  assert.deepEqual((await t.client(u.key).bindings.get()).phone, { countryCode: '+86', number: '138****0008' });
  assert.deepEqual(tab.pageErrors, []);
});

test('redeeming from the store asks first: dismissed, nothing is spent; accepted, the redemption is listed and its tokens spent', { skip }, async () => {
  const { page } = tab;
  const me = t.client(u.key);
  const before = (await me.billing.balance()).balance;
  const product = (await me.billing.products()).items.find((p) => p.available && p.priceTokens <= before)!;
  assert.ok(product, `a product within the balance of ${before}`);
  const redeemed = (await me.billing.redeems({ pageSize: 100 })).total;
  await page.reload();
  const card = page.locator('section[aria-labelledby="store-h"] li.card').filter({ hasText: product.name });
  const asked = answerNextDialog(page, false);
  await card.getByRole('button', { name: 'Redeem' }).click();
  assert.equal(asked(), `Redeem “${product.name}” with tokens?`);
  assert.deepEqual([(await me.billing.balance()).balance, (await me.billing.redeems({ pageSize: 100 })).total], [before, redeemed], 'a dismissed redemption spends nothing');
  page.once('dialog', (d) => void d.accept());
  await card.getByRole('button', { name: 'Redeem' }).click();
  await page.locator('tr[data-redeem]').nth(redeemed).waitFor();
  assert.deepEqual([(await me.billing.balance()).balance, (await me.billing.redeems({ pageSize: 100 })).total], [before - product.priceTokens, redeemed + 1]);
  assert.deepEqual(tab.pageErrors, []);
});
