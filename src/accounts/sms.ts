// Delivery of phone verification codes. The hub speaks to one small
// interface; the shipped implementation POSTs JSON to SMS_WEBHOOK_URL, where
// an operator's relay hands it to their SMS provider.
import type { Config } from '../config.js';

export interface SmsMessage {
  countryCode: string;
  phone: string;
  code: string;
  text: string;
}

export interface SmsSender {
  /** Resolves once the relay accepted the message; rejects otherwise. */
  send(msg: SmsMessage): Promise<void>;
}

export class WebhookSmsSender implements SmsSender {
  constructor(private readonly url: string) {}

  async send(msg: SmsMessage): Promise<void> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: `${msg.countryCode}${msg.phone}`, ...msg }),
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`SMS relay answered HTTP ${res.status}`);
  }
}

export function smsSenderFrom(config: Pick<Config, 'smsWebhookUrl'>): SmsSender | undefined {
  return config.smsWebhookUrl ? new WebhookSmsSender(config.smsWebhookUrl) : undefined;
}
