// The console's Account page for the bindings tests: a hub that sends its phone codes to a local SMS
// webhook and takes the chat platform's bot under `botSecret`, one user signed in on the Account page.
import type { Locator } from 'playwright-core';
import type { Config } from '../../src/config.js';
import { startTestHub, type TestHub } from './hub.js';
import { startSmsWebhook, type SmsWebhook } from './sms.js';
import { openConsole, signInAs, type ConsoleTab } from './browser.js';

export interface AccountConsole {
  sms: SmsWebhook;
  t: TestHub;
  u: { id: string; key: string };
  tab: ConsoleTab;
}

export async function openAccountConsole(user: string, botSecret: string, hub: Partial<Config> = {}): Promise<AccountConsole> {
  const sms = await startSmsWebhook();
  const t = await startTestHub({ rateLimitPhoneCodePerHour: 0, ...hub }, { SMS_WEBHOOK_URL: sms.url, CHATAPP_WEBHOOK_SECRET: botSecret });
  const u = await t.user(user);
  const tab = await openConsole(t.url);
  await signInAs(tab.page, t.url, u.key);
  await tab.page.getByRole('link', { name: 'Account' }).click();
  return { sms, t, u, tab };
}

/** The Account page's bindings section. */
export const bindingsOf = (tab: ConsoleTab): Locator => tab.page.locator('section[aria-labelledby="bindings-h"]');
