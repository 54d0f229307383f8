// Builds the billing domain and registers its routes. Other domains move
// tokens through ledger.ts's applyBalanceChange, never by writing users.balance.
import type { HubContext } from '../context.js';
import type { HttpApi } from '../server/http.js';
import { Catalogue } from './catalogue.js';
import { Statement } from './statement.js';
import { OrderService } from './orders.js';
import { RedeemService, type StepUpCheck } from './redeems.js';
import { Subscriptions } from './subscriptions.js';
import { billingRoutes, type BillingServices } from './routes.js';
import { Payments } from './payments/index.js';
import { paymentRoutes } from './payments/routes.js';
import type { Limiter } from '../ratelimit/limiter.js';

export { applyBalanceChange, type BalanceChange, type LedgerType } from './ledger.js';
export { PlanGrantSweeper } from './plan-grants.js';
export { enforceQuota, type QuotaKind } from './quotas.js';

export function buildBilling(ctx: HubContext, api: HttpApi, stepUp: StepUpCheck, limiter: Limiter): BillingServices {
  const catalogue = new Catalogue(ctx);
  const payments = new Payments(ctx.config.payments, ctx.secrets.vaultKey);
  const services: BillingServices = {
    catalogue,
    statement: new Statement(ctx),
    orders: new OrderService(ctx, catalogue, payments, limiter),
    redeems: new RedeemService(ctx, stepUp),
    subscriptions: new Subscriptions(ctx),
  };
  billingRoutes(api, services);
  paymentRoutes(api, ctx, payments, services.orders);
  return services;
}
