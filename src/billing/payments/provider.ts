// What a payment channel does for the hub: start a payment for an order (a URL to
// open or a code to scan) and verify the provider's notification over its raw
// bytes. Settling the order is not the provider's job (orders.ts settle()).

/** The part of an order a provider needs. `paymentRef` is the out_trade_no sent to the provider. */
export interface PayOrder {
  orderId: string;
  paymentRef: string;
  amountCents: number;
  currency: string;
  subject: string;
  /** The provider is told to stop accepting payment at the order's own expiry. */
  expiresAt: Date;
}

/** What the client needs to pay: a page to open or a code to show as a QR code. */
export interface PayStart {
  payUrl?: string;
  codeUrl?: string;
}

export interface NotifyIn {
  raw: Buffer;
  /** Lower-case header names. */
  headers: Record<string, string>;
}

/** An authentic notification: a completed payment, or an event that settles nothing (acknowledged all the same). */
export type Notification =
  | { paid: true; paymentRef: string; amountCents: number; tradeNo: string }
  | { paid: false; reason: string };

/** How the provider expects its notification to be answered. */
export interface NotifyAnswer {
  status: number;
  body?: string;
  contentType?: string;
}

export interface PaymentProvider {
  readonly name: 'alipay' | 'wechat' | 'sandbox';
  start(o: PayOrder): Promise<PayStart>;
  /** Throws NotifyRefused when the notification is not authentic or not for this merchant. */
  verifyNotify(n: NotifyIn): Notification;
  ack(): NotifyAnswer;
  refuse(reason: string): NotifyAnswer;
}

/** A notification that must not be trusted (bad signature, another merchant, unknown order, wrong amount). */
export class NotifyRefused extends Error {}

/** Whole cents as the decimal string providers use for yuan amounts ("12.30"). */
export function centsToYuan(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** "12.3" / "12.30" / "12" → 1230; anything else → NaN. */
export function yuanToCents(s: string | undefined): number {
  const m = /^(\d{1,10})(?:\.(\d{1,2}))?$/.exec(s ?? '');
  if (!m) return NaN;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** A date as China Standard Time (UTC+8) parts, the zone both providers use. */
export function chinaTime(d: Date): { date: string; time: string } {
  const t = new Date(d.getTime() + 8 * 3600_000).toISOString();
  return { date: t.slice(0, 10), time: t.slice(11, 19) };
}
