// The sandbox channel (PAYMENT_SANDBOX=1): a pay page on the hub stands in for a
// provider's. Its "Pay" button posts a notification signed with the hub's sandbox
// key (HMAC-SHA256, derived from the master secret so every node shares it) to
// the sandbox notify route, which verifies and settles it exactly like a real
// provider's. The page itself is reached only with the token in the order's payUrl.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { NotifyRefused, centsToYuan, type Notification, type NotifyIn, type PayOrder, type PayStart, type PaymentProvider } from './provider.js';

export const SANDBOX_PAGE_PATH = '/api/v1/payments/sandbox/pay';
export const SANDBOX_NOTIFY_PATH = '/api/v1/payments/notify/sandbox';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox' as const;
  private readonly key: Buffer;

  /** `base` is the hub's public URL ('' → the payUrl is a path on the hub). */
  constructor(
    vaultKey: Buffer,
    private readonly base: string,
  ) {
    this.key = createHmac('sha256', vaultKey).update('payment-sandbox').digest();
  }

  async start(o: PayOrder): Promise<PayStart> {
    return { payUrl: `${this.base}${SANDBOX_PAGE_PATH}/${encodeURIComponent(o.orderId)}?t=${this.pageToken(o.paymentRef)}` };
  }

  pageToken(paymentRef: string): string {
    return this.mac(`page\n${paymentRef}`);
  }

  checkPageToken(paymentRef: string, token: string | undefined): boolean {
    return !!token && safeEqual(this.pageToken(paymentRef), token);
  }

  /** The fields of a signed "paid" notification for the order, as the pay page posts them. */
  signedNotify(paymentRef: string, amountCents: number): Record<string, string> {
    const fields: Record<string, string> = { out_trade_no: paymentRef, total_cents: String(amountCents), trade_no: 'sbx_' + randomBytes(12).toString('hex'), trade_status: 'SUCCESS' };
    return { ...fields, sign: this.mac(signContent(fields)) };
  }

  /** The HTML pay page: what is being bought and a form posting the signed notification. */
  payPage(o: { itemName: string; qty: number; amountCents: number; currency: string; paymentRef: string }): string {
    const fields = this.signedNotify(o.paymentRef, o.amountCents);
    const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
    return `<!doctype html><html><head><meta charset="utf-8"><title>Sandbox payment</title></head><body>
<h1>Sandbox payment</h1><p>${esc(o.itemName)} × ${o.qty}: ${esc(o.currency)} ${centsToYuan(o.amountCents)}</p>
<p>No money moves: this page stands in for a payment provider.</p>
<form method="post" action="${SANDBOX_NOTIFY_PATH}">${inputs}<button type="submit">Pay</button></form></body></html>`;
  }

  verifyNotify(n: NotifyIn): Notification {
    const fields: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(n.raw.toString('utf8'))) {
      if (k in fields) throw new NotifyRefused(`parameter ${k} given twice`);
      fields[k] = v;
    }
    const { sign, ...signed } = fields;
    if (!sign || !safeEqual(this.mac(signContent(signed)), sign)) throw new NotifyRefused('signature does not verify with the sandbox key');
    if (signed.trade_status !== 'SUCCESS') return { paid: false, reason: 'not a payment' };
    const amountCents = Number(signed.total_cents);
    if (!signed.out_trade_no || !signed.trade_no || !/^\d{1,12}$/.test(signed.total_cents ?? '')) throw new NotifyRefused('notification without out_trade_no, trade_no or total_cents');
    return { paid: true, paymentRef: signed.out_trade_no, amountCents, tradeNo: signed.trade_no };
  }

  ack() {
    return { status: 200, body: '<!doctype html><html><body><h1>Paid</h1><p>The order is paid; you can close this page.</p></body></html>', contentType: 'text/html; charset=utf-8' };
  }

  refuse(reason: string) {
    return { status: 400, body: `<!doctype html><html><body><h1>Payment refused</h1><p>${esc(reason)}</p></body></html>`, contentType: 'text/html; charset=utf-8' };
  }

  private mac(s: string): string {
    return createHmac('sha256', this.key).update(s, 'utf8').digest('base64url');
  }
}

function signContent(fields: Record<string, string>): string {
  return Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('&');
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
