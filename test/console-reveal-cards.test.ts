// Revealing a delivered redemption's cards (console/reveal-cards.tsx), step by step: "Revealing…" held
// while the hub answers; the hub's ask for a phone code opens the form without an error; Send code waits
// for a number and sends it trimmed with the country code typed (a phone bound under +44 here); a wrong
// code is said and the form stays; "Send another code" starts again with the code box empty; the right
// code shows the cards (a missing number or password as —); Copy cards copies them
// one a line as number:password; Hide goes back to the Reveal button, and a second reveal asks again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestHub } from './helpers/hub.js';
import { ageCodes, type SmsWebhook } from './helpers/sms.js';
import { openAccountConsole } from './helpers/account-console.js';
import { closeConsoleTest, holdNext, noBrowser, type ConsoleTab } from './helpers/browser.js';

const skip = noBrowser();
const PHONE = '7700900123';
const CC = '+44';
let sms: SmsWebhook;
let t: TestHub;
let tab: ConsoleTab;
let u: { id: string; key: string };

before(async () => {
  if (skip) return;
  ({ sms, t, u, tab } = await openAccountConsole('revealer', 'bot-secret-reveal', { starterTokens: 5000 }));
  const me = t.client(u.key);
  await me.bindings.sendPhoneCode(PHONE, CC);
  await me.bindings.bindPhone(PHONE, sms.lastCodeFor(PHONE), CC);
  // What the Copy button writes, kept where the test can read it (no clipboard permission needed).
  // (A string: a function would be compiled with helpers the page does not have.)
  await tab.page.addInitScript(`Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (text) => { window.copied = text; } } });`);
});
after(async () => {
  if (skip) return;
  await closeConsoleTest(tab, { failedLoadsProvoked: true, then: [() => t.close(), () => sms.close()] }); // the hub's 403s ask for a code
});

test('reveal with a phone code: each step held, a wrong code said, another code sent, the cards shown and copied, hidden, asked again', { skip }, async () => {
  const { page } = tab;
  const me = t.client(u.key);
  const r = await me.billing.redeem('coffee-voucher');
  await t.admin.admin.deliverRedeem(r.id, [{ no: 'CARD-1', pwd: 'PIN-1' }, { no: 'CARD-2' }, { pwd: 'PIN-3' }]);
  await page.reload();
  const row = page.locator(`tr[data-redeem="${r.id}"]`);
  const alerts = row.getByRole('alert');
  const cardsCall = (u: URL) => u.pathname === `/api/v1/me/redeems/${r.id}/cards`;

  // The first try, without a code: held, then the hub's 403 opens the form (not an error).
  let release = await holdNext(page, cardsCall);
  await row.getByRole('button', { name: 'Reveal cards' }).click();
  const revealing = row.getByRole('button', { name: 'Revealing…' });
  await revealing.waitFor();
  assert.ok(await revealing.isDisabled());
  await release();
  const verify = row.getByRole('form', { name: 'Verify to reveal Coffee voucher' });
  await verify.waitFor();
  assert.equal(await alerts.count(), 0);
  assert.equal(await row.getByRole('button', { name: 'Reveal cards' }).count(), 0);

  // Send code: waits for a number; sent trimmed, with the country code typed.
  const send = verify.getByRole('button', { name: 'Send code' });
  assert.ok(await send.isDisabled(), 'no number yet');
  await verify.getByLabel('Bound phone number').fill('   ');
  assert.ok(await send.isDisabled(), 'only spaces');
  await verify.getByLabel('Country code').fill(` ${CC} `);
  await verify.getByLabel('Bound phone number').fill(` ${PHONE} `);
  await ageCodes(t);
  release = await holdNext(page, (u) => u.pathname === '/api/v1/me/phone/send-code');
  await send.click();
  const sending = verify.getByRole('button', { name: 'Sending…' });
  await sending.waitFor();
  assert.ok(await sending.isDisabled());
  await release();
  const codeBox = verify.getByLabel('Code from the SMS');
  await codeBox.waitFor();
  assert.deepEqual([sms.inbox.at(-1).countryCode, sms.inbox.at(-1).phone], [CC, PHONE]);

  // A wrong code: said, and the form stays.
  const verifyButton = verify.getByRole('button', { name: 'Verify and reveal' });
  assert.ok(await verifyButton.isDisabled(), 'no code yet');
  const right = sms.lastCodeFor(PHONE);
  await codeBox.fill(right === '000000' ? '111111' : '000000');
  await verifyButton.click();
  await alerts.filter({ hasText: 'verifyToken is wrong or expired (403' }).waitFor();
  assert.ok(await verifyButton.isEnabled());

  // Send another code: back to Send code; the new code's box starts empty.
  await verify.getByRole('button', { name: 'Send another code' }).click();
  await codeBox.waitFor({ state: 'detached' });
  await ageCodes(t);
  await send.click();
  await codeBox.waitFor();
  assert.equal(await codeBox.inputValue(), '');
  const code = sms.lastCodeFor(PHONE);
  assert.notEqual(code, right);

  // The right code: "Checking…" held, then the cards. (The box takes six characters: a space pasted
  // around a code would push out a digit, so the code is typed as it is.)
  await codeBox.fill(code);
  release = await holdNext(page, cardsCall);
  await verifyButton.click();
  const checking = verify.getByRole('button', { name: 'Checking…' });
  await checking.waitFor();
  assert.ok(await checking.isDisabled());
  await release();
  const cards = row.getByRole('table', { name: 'Cards of Coffee voucher' });
  await cards.waitFor();
  assert.deepEqual(await cards.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))), [
    ['CARD-1', 'PIN-1'],
    ['CARD-2', '—'],
    ['—', 'PIN-3'],
  ]);

  await row.getByRole('button', { name: 'Copy cards' }).click();
  await row.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => (window as any).copied), 'CARD-1:PIN-1\nCARD-2\nPIN-3');

  // Hide: the Reveal button again (not the form); the code was spent, so the hub asks again.
  await row.getByRole('button', { name: 'Hide' }).click();
  await cards.waitFor({ state: 'detached' });
  assert.equal(await verify.count(), 0);
  await row.getByRole('button', { name: 'Reveal cards' }).click();
  await verify.waitFor();
  assert.equal(await alerts.count(), 0);
});
