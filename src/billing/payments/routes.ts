// HTTP surface of the payment channels: each provider's notify route (raw body:
// signatures are over the exact bytes) and the sandbox's pay page.
import type { HttpApi } from '../../server/http.js';
import { noContent, text } from '../../server/reply.js';
import type { Logger } from '../../log.js';
import type { HubContext } from '../../context.js';
import { fail } from '../../errors.js';
import { Order } from '../entities.js';
import { expireStale, type OrderService } from '../orders.js';
import { NOTIFY_PATH, NotifyRefused, type Payments, type PaymentProvider } from './index.js';
import { SANDBOX_PAGE_PATH } from './sandbox.js';

/** Notifications are a few KB; a much larger body is not one. */
const NOTIFY_BODY_LIMIT = 64 * 1024;

export function paymentRoutes(api: HttpApi, ctx: HubContext, payments: Payments, orders: OrderService): void {
  for (const provider of payments.all()) {
    api.route({
      method: 'POST', path: `${NOTIFY_PATH}/${provider.name}`, auth: 'none', rawBody: true, bodyLimit: NOTIFY_BODY_LIMIT,
      doc: { summary: `Payment notification from ${provider.name} (signed; verified over the raw bytes)`, raw: { status: 200, description: "The provider's own acknowledgement format (or 204)." } },
      handler: async (r) => answer(provider, await receive(provider, orders, ctx.log, r.raw!, r.headers)),
    });
  }
  const sandbox = payments.sandbox;
  if (sandbox) {
    api.route({
      method: 'GET', path: `${SANDBOX_PAGE_PATH}/:id`, auth: 'none',
      doc: { summary: 'The sandbox payment page of an order (needs its page token `t`)', raw: { status: 200, contentType: 'text/html', description: 'An HTML page (409 when the order is no longer pending).' } },
      handler: async (r: { params: Record<string, string>; query: Record<string, string> }) => {
        const em = ctx.em();
        await expireStale(em, { id: r.params.id });
        const o = await em.findOne(Order, { id: r.params.id, payProvider: 'sandbox' });
        // Without the page token the order might as well not exist.
        if (!o || !sandbox.checkPageToken(o.paymentRef!, r.query.t)) throw fail('NOT_FOUND', 'order not found');
        if (o.status !== 'pending') return text(409, `<!doctype html><html><body><h1>Order ${o.status}</h1></body></html>`, 'text/html; charset=utf-8');
        return text(200, sandbox.payPage({ ...o, paymentRef: o.paymentRef! }), 'text/html; charset=utf-8');
      },
    });
  }
}

async function receive(provider: PaymentProvider, orders: OrderService, log: Logger, raw: Buffer, headers: Record<string, string>): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const n = provider.verifyNotify({ raw, headers });
    if (!n.paid) {
      log.info('payment notification settles nothing', { provider: provider.name, reason: n.reason });
      return { ok: true };
    }
    const delivered = await orders.settle(provider.name, n);
    log.info('payment notification', { provider: provider.name, paymentRef: n.paymentRef, delivered });
    return { ok: true };
  } catch (e) {
    if (!(e instanceof NotifyRefused)) throw e; // a database failure: the provider retries
    log.warn('payment notification refused', { provider: provider.name, reason: e.message });
    return { ok: false, reason: e.message };
  }
}

function answer(provider: PaymentProvider, r: { ok: true } | { ok: false; reason: string }) {
  const a = r.ok ? provider.ack() : provider.refuse(r.reason);
  return a.body === undefined ? noContent() : text(a.status, a.body, a.contentType);
}
