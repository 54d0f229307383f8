// WeChat Pay API v3, Native pay. The order call (POST /v3/pay/transactions/native)
// is signed with the merchant's private key: Authorization
// `WECHATPAY2-SHA256-RSA2048 mchid,nonce_str,signature,timestamp,serial_no` over
// `METHOD\nPATH\ntimestamp\nnonce\nbody\n`; its answer carries `code_url`. Answers
// and notifications are signed by the platform: `Wechatpay-Signature` over
// `timestamp\nnonce\nbody\n`, verified with the platform certificate / public key;
// the notification's `resource` is AES-256-GCM with the APIv3 key, its `nonce`
// and `associated_data`. Answer 204, or 4xx with {code: "FAIL"} and WeChat retries.
import { createDecipheriv, createSign, createVerify, randomBytes, type KeyObject } from 'node:crypto';
import type { PaymentsConfig } from '../../config.js';
import { fail } from '../../errors.js';
import { privateKeyFrom, publicKeyFrom } from './keys.js';
import { NotifyRefused, chinaTime, type Notification, type NotifyIn, type PayOrder, type PayStart, type PaymentProvider } from './provider.js';

type WechatConfig = NonNullable<PaymentsConfig['wechat']>;

const ORDER_PATH = '/v3/pay/transactions/native';
/** WeChat's own bound on how old a signed message may be. */
const MAX_SKEW_SECONDS = 300;
const CALL_TIMEOUT_MS = 10_000;

export class WechatProvider implements PaymentProvider {
  readonly name = 'wechat' as const;
  private readonly privateKey: KeyObject;
  private readonly platformKey: KeyObject;
  private readonly apiV3Key: Buffer;

  constructor(
    private readonly cfg: WechatConfig,
    private readonly notifyUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.privateKey = privateKeyFrom(cfg.privateKey, 'WECHAT_PAY_PRIVATE_KEY');
    this.platformKey = publicKeyFrom(cfg.platformPublicKey, 'WECHAT_PAY_PLATFORM_PUBLIC_KEY');
    this.apiV3Key = Buffer.from(cfg.apiV3Key, 'utf8');
    if (this.apiV3Key.length !== 32) throw new Error('WECHAT_PAY_API_V3_KEY must be 32 bytes');
  }

  async start(o: PayOrder): Promise<PayStart> {
    const exp = chinaTime(o.expiresAt);
    const body = JSON.stringify({
      appid: this.cfg.appId,
      mchid: this.cfg.mchId,
      description: o.subject.slice(0, 127),
      out_trade_no: o.paymentRef,
      time_expire: `${exp.date}T${exp.time}+08:00`,
      notify_url: this.notifyUrl,
      amount: { total: o.amountCents, currency: o.currency },
    });
    const url = new URL(this.cfg.baseUrl + ORDER_PATH);
    const timestamp = String(Math.floor(this.now() / 1000));
    const nonce = randomBytes(16).toString('hex');
    const message = `POST\n${url.pathname}${url.search}\n${timestamp}\n${nonce}\n${body}\n`;
    const signature = createSign('RSA-SHA256').update(message, 'utf8').sign(this.privateKey, 'base64');
    const authorization = `WECHATPAY2-SHA256-RSA2048 mchid="${this.cfg.mchId}",nonce_str="${nonce}",signature="${signature}",timestamp="${timestamp}",serial_no="${this.cfg.serialNo}"`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { authorization, accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'agent-hub' },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      text = await res.text();
    } catch (e) {
      throw fail('PAYMENT_PROVIDER_FAILED', `WeChat Pay did not answer: ${(e as Error).message}`);
    }
    if (res.status !== 200) {
      let code = '';
      try {
        code = String(JSON.parse(text).code ?? '');
      } catch {}
      throw fail('PAYMENT_PROVIDER_FAILED', `WeChat Pay refused the order: ${res.status} ${code.slice(0, 64)}`.trim());
    }
    // The answer is trusted only when the platform signed it.
    const h = (n: string) => res.headers.get(n) ?? '';
    if (!this.signedByPlatform(h('wechatpay-timestamp'), h('wechatpay-nonce'), h('wechatpay-signature'), h('wechatpay-serial'), text)) {
      throw fail('PAYMENT_PROVIDER_FAILED', 'WeChat Pay answer is not signed by the platform key');
    }
    let codeUrl: unknown;
    try {
      codeUrl = JSON.parse(text).code_url;
    } catch {}
    if (typeof codeUrl !== 'string' || !codeUrl || codeUrl.length > 512) throw fail('PAYMENT_PROVIDER_FAILED', 'WeChat Pay answer has no code_url');
    return { codeUrl };
  }

  verifyNotify(n: NotifyIn): Notification {
    const body = n.raw.toString('utf8');
    const hd = n.headers;
    if (!this.signedByPlatform(hd['wechatpay-timestamp'], hd['wechatpay-nonce'], hd['wechatpay-signature'], hd['wechatpay-serial'], body)) {
      throw new NotifyRefused('Wechatpay-Signature does not verify with the platform key (or is stale)');
    }
    let note: any;
    try {
      note = JSON.parse(body);
    } catch {
      throw new NotifyRefused('notification body is not JSON');
    }
    if (note?.event_type !== 'TRANSACTION.SUCCESS') return { paid: false, reason: `event_type ${String(note?.event_type).slice(0, 40)}` };
    const r = note.resource;
    if (r?.algorithm !== 'AEAD_AES_256_GCM' || typeof r.ciphertext !== 'string' || typeof r.nonce !== 'string') throw new NotifyRefused('resource is not AEAD_AES_256_GCM');
    let tx: any;
    try {
      tx = JSON.parse(this.decrypt(r.ciphertext, r.nonce, typeof r.associated_data === 'string' ? r.associated_data : ''));
    } catch {
      throw new NotifyRefused('resource does not decrypt with the APIv3 key');
    }
    if (tx?.mchid !== this.cfg.mchId || tx?.appid !== this.cfg.appId) throw new NotifyRefused('transaction is for another merchant or app');
    if (tx.trade_state !== 'SUCCESS') return { paid: false, reason: `trade_state ${String(tx.trade_state).slice(0, 40)}` };
    const total = tx.amount?.total;
    if (typeof tx.out_trade_no !== 'string' || typeof tx.transaction_id !== 'string' || !Number.isSafeInteger(total)) {
      throw new NotifyRefused('transaction without out_trade_no, transaction_id or amount.total');
    }
    return { paid: true, paymentRef: tx.out_trade_no, amountCents: total, tradeNo: tx.transaction_id };
  }

  ack() {
    return { status: 204 };
  }

  refuse(reason: string) {
    return { status: 400, body: JSON.stringify({ code: 'FAIL', message: reason }), contentType: 'application/json' };
  }

  private signedByPlatform(timestamp: string | undefined, nonce: string | undefined, signature: string | undefined, serial: string | undefined, body: string): boolean {
    if (!timestamp || !nonce || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
    if (Math.abs(this.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
    if (this.cfg.platformSerial && serial !== this.cfg.platformSerial) return false;
    return createVerify('RSA-SHA256').update(`${timestamp}\n${nonce}\n${body}\n`, 'utf8').verify(this.platformKey, signature, 'base64');
  }

  private decrypt(ciphertext: string, nonce: string, associatedData: string): string {
    const data = Buffer.from(ciphertext, 'base64');
    if (data.length <= 16) throw new Error('ciphertext too short');
    const d = createDecipheriv('aes-256-gcm', this.apiV3Key, Buffer.from(nonce, 'utf8'));
    d.setAuthTag(data.subarray(data.length - 16));
    d.setAAD(Buffer.from(associatedData, 'utf8'));
    return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString('utf8');
  }
}
