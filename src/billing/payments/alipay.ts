// Alipay page pay (alipay.trade.page.pay) with RSA2 signatures, as Alipay documents:
// the request is signed over every parameter except `sign`, sorted by name and
// joined as `k=v&…` (raw values), SHA256withRSA with the app's private key; the
// asynchronous notification is verified over every parameter except `sign` and
// `sign_type`, the same way, with Alipay's public key. Answer "success" or Alipay retries.
import { createSign, createVerify, type KeyObject } from 'node:crypto';
import type { PaymentsConfig } from '../../config.js';
import { privateKeyFrom, publicKeyFrom } from './keys.js';
import { NotifyRefused, centsToYuan, chinaTime, yuanToCents, type Notification, type NotifyIn, type PayOrder, type PayStart, type PaymentProvider } from './provider.js';

type AlipayConfig = NonNullable<PaymentsConfig['alipay']>;

/** The string Alipay signs: parameters sorted by name, empty values and the excluded names left out. */
export function alipaySignContent(params: Record<string, string>, exclude: readonly string[]): string {
  return Object.keys(params)
    .filter((k) => !exclude.includes(k) && params[k] !== '' && params[k] !== undefined)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

const PAID_STATES = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);

export class AlipayProvider implements PaymentProvider {
  readonly name = 'alipay' as const;
  private readonly privateKey: KeyObject;
  private readonly alipayKey: KeyObject;

  constructor(
    private readonly cfg: AlipayConfig,
    private readonly notifyUrl: string,
  ) {
    this.privateKey = privateKeyFrom(cfg.privateKey, 'ALIPAY_PRIVATE_KEY');
    this.alipayKey = publicKeyFrom(cfg.alipayPublicKey, 'ALIPAY_PUBLIC_KEY');
  }

  async start(o: PayOrder): Promise<PayStart> {
    const now = chinaTime(new Date());
    const exp = chinaTime(o.expiresAt);
    const params: Record<string, string> = {
      app_id: this.cfg.appId,
      method: 'alipay.trade.page.pay',
      format: 'JSON',
      charset: 'utf-8',
      sign_type: 'RSA2',
      timestamp: `${now.date} ${now.time}`,
      version: '1.0',
      notify_url: this.notifyUrl,
      biz_content: JSON.stringify({
        out_trade_no: o.paymentRef,
        product_code: 'FAST_INSTANT_TRADE_PAY',
        total_amount: centsToYuan(o.amountCents),
        subject: o.subject.slice(0, 256),
        time_expire: `${exp.date} ${exp.time}`,
      }),
    };
    if (this.cfg.returnUrl) params.return_url = this.cfg.returnUrl;
    params.sign = createSign('RSA-SHA256').update(alipaySignContent(params, ['sign']), 'utf8').sign(this.privateKey, 'base64');
    return { payUrl: `${this.cfg.gateway}?${new URLSearchParams(params).toString()}` };
  }

  verifyNotify(n: NotifyIn): Notification {
    const params: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(n.raw.toString('utf8'))) {
      if (k in params) throw new NotifyRefused(`parameter ${k} given twice`);
      params[k] = v;
    }
    if (params.sign_type !== 'RSA2' || !params.sign) throw new NotifyRefused('not an RSA2-signed notification');
    const content = alipaySignContent(params, ['sign', 'sign_type']);
    const good = createVerify('RSA-SHA256').update(content, 'utf8').verify(this.alipayKey, params.sign, 'base64');
    if (!good) throw new NotifyRefused('signature does not verify with the Alipay public key');
    if (params.app_id !== this.cfg.appId) throw new NotifyRefused('notification is for another app_id');
    if (!PAID_STATES.has(params.trade_status)) return { paid: false, reason: `trade_status ${String(params.trade_status).slice(0, 40)}` };
    const amountCents = yuanToCents(params.total_amount);
    if (!params.out_trade_no || !params.trade_no || !Number.isSafeInteger(amountCents)) throw new NotifyRefused('paid notification without out_trade_no, trade_no or a valid total_amount');
    return { paid: true, paymentRef: params.out_trade_no, amountCents, tradeNo: params.trade_no };
  }

  ack() {
    return { status: 200, body: 'success', contentType: 'text/plain; charset=utf-8' };
  }

  refuse() {
    return { status: 400, body: 'failure', contentType: 'text/plain; charset=utf-8' };
  }
}
