// The payment channels this hub serves: a real provider where its variables are
// set, else the sandbox when PAYMENT_SANDBOX=1, else none (503 5031 at order creation).
import type { PaymentsConfig } from '../../config.js';
import { fail } from '../../errors.js';
import type { PayChannel } from '../catalogue.js';
import { AlipayProvider } from './alipay.js';
import { WechatProvider } from './wechat.js';
import { SandboxProvider } from './sandbox.js';
import type { PaymentProvider } from './provider.js';

export { NotifyRefused, type PaymentProvider, type PayOrder, type PayStart, type Notification } from './provider.js';
export { SandboxProvider } from './sandbox.js';

export const NOTIFY_PATH = '/api/v1/payments/notify';

export class Payments {
  readonly alipay?: AlipayProvider;
  readonly wechat?: WechatProvider;
  readonly sandbox?: SandboxProvider;

  constructor(cfg: PaymentsConfig, vaultKey: Buffer) {
    const base = cfg.publicUrl ?? '';
    if (cfg.alipay) this.alipay = new AlipayProvider(cfg.alipay, `${base}${NOTIFY_PATH}/alipay`);
    if (cfg.wechat) this.wechat = new WechatProvider(cfg.wechat, `${base}${NOTIFY_PATH}/wechat`);
    if (cfg.sandbox) this.sandbox = new SandboxProvider(vaultKey, base);
  }

  /** The provider serving a channel; NOT_CONFIGURED (503, 5031) when there is none. */
  forChannel(channel: PayChannel): PaymentProvider {
    const p = this[channel] ?? this.sandbox;
    if (!p) throw fail('NOT_CONFIGURED', `payment channel ${channel} is not configured on this hub`);
    return p;
  }

  /** Providers that receive notifications. */
  all(): PaymentProvider[] {
    return [this.alipay, this.wechat, this.sandbox].filter((p): p is NonNullable<typeof p> => !!p);
  }
}
