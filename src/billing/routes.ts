// HTTP surface of billing: balance, ledger, trends, plans, orders, the store
// and redemptions, and the administrator's side of them.
import type { HttpApi } from '../server/http.js';
import { created } from '../server/reply.js';
import type { Catalogue } from './catalogue.js';
import type { Statement } from './statement.js';
import type { OrderService } from './orders.js';
import type { RedeemService } from './redeems.js';
import type { Subscriptions } from './subscriptions.js';
import * as S from './schemas.js';
import { Balance, LedgerPage, Plans, Products, TokenPacks } from './view-schemas.js';
import * as V from './view-schemas.js';
import { User } from '../accounts/view-schemas.js';

export interface BillingServices {
  catalogue: Catalogue;
  statement: Statement;
  orders: OrderService;
  redeems: RedeemService;
  subscriptions: Subscriptions;
}

export function billingRoutes(api: HttpApi, b: BillingServices): void {
  const { catalogue, statement, orders, redeems, subscriptions } = b;
  api.route({ method: 'GET', path: '/api/v1/me/balance', auth: 'user', data: Balance, handler: (r) => statement.balance(r.principal.userId) });
  api.route({ method: 'GET', path: '/api/v1/me/ledger', auth: 'user', query: S.LedgerQuery, data: LedgerPage, handler: (r) => statement.ledger(r.principal.userId, r.query) });
  api.route({ method: 'GET', path: '/api/v1/me/trends', auth: 'user', query: S.TrendsQuery, data: V.Trends, handler: (r) => statement.trends(r.principal.userId, r.query) });
  api.route({ method: 'GET', path: '/api/v1/me/plan', auth: 'user', data: V.MyPlan, handler: (r) => subscriptions.myPlan(r.principal.userId) });

  api.route({ method: 'GET', path: '/api/v1/plans', auth: 'optional', data: Plans, handler: () => catalogue.plans() });
  api.route({ method: 'GET', path: '/api/v1/token-packs', auth: 'optional', data: TokenPacks, handler: () => catalogue.tokenPacks() });
  api.route({ method: 'POST', path: '/api/v1/orders/token-pack', auth: 'user', body: S.TokenPackOrder, data: V.Order, doc: { status: 201 }, handler: async (r) => created(await orders.buyTokenPack(r.principal.userId, r.body)) });
  api.route({ method: 'POST', path: '/api/v1/orders/plan', auth: 'user', body: S.PlanOrder, data: V.Order, doc: { status: 201 }, handler: async (r) => created(await orders.buyPlan(r.principal.userId, r.body)) });
  api.route({ method: 'GET', path: '/api/v1/orders', auth: 'user', query: S.OrdersQuery, data: V.OrderPage, handler: (r) => orders.list(r.principal.userId, r.query) });
  api.route({ method: 'GET', path: '/api/v1/orders/:id', auth: 'user', data: V.Order, handler: (r) => orders.get(r.principal.userId, r.params.id) });
  api.route({ method: 'POST', path: '/api/v1/orders/:id/cancel', auth: 'user', data: V.Order, handler: (r) => orders.cancel(r.principal.userId, r.params.id) });

  api.route({ method: 'GET', path: '/api/v1/store/products', auth: 'optional', data: Products, handler: () => catalogue.products() });
  api.route({ method: 'POST', path: '/api/v1/store/redeem', auth: 'user', body: S.RedeemBody, data: V.Redemption, doc: { status: 201 }, handler: async (r) => created(await redeems.redeem(r.principal.userId, r.body.productId, r.body.qty ?? 1)) });
  api.route({ method: 'GET', path: '/api/v1/me/redeems', auth: 'user', query: S.RedeemsQuery, data: V.RedemptionPage, handler: (r) => redeems.listMine(r.principal.userId, r.query) });
  api.route({ method: 'GET', path: '/api/v1/me/redeems/:id', auth: 'user', data: V.Redemption, handler: (r) => redeems.getMine(r.principal.userId, r.params.id) });
  api.route({ method: 'PATCH', path: '/api/v1/me/redeems/:id/read', auth: 'user', data: V.Redemption, handler: (r) => redeems.markRead(r.principal.userId, r.params.id) });
  api.route({ method: 'POST', path: '/api/v1/me/redeems/:id/cards', auth: 'user', body: S.CardsBody, data: V.Cards, handler: (r) => redeems.revealMine(r.principal.userId, r.params.id, r.body.verifyToken) });

  api.route({ method: 'GET', path: '/api/v1/admin/redeems/summary', auth: 'admin', data: V.RedeemsSummary, handler: () => redeems.summary() });
  api.route({ method: 'GET', path: '/api/v1/admin/redeems', auth: 'admin', query: S.AdminRedeemsQuery, data: V.AdminRedemptionPage, handler: (r) => redeems.list(r.query) });
  api.route({ method: 'GET', path: '/api/v1/admin/redeems/:id', auth: 'admin', data: V.AdminRedemption, handler: (r) => redeems.get(r.params.id) });
  api.route({ method: 'POST', path: '/api/v1/admin/redeems/:id/deliver', auth: 'admin', body: S.DeliverBody, data: V.AdminRedemption, handler: (r) => redeems.deliver(r.params.id, r.body.cards) });
  api.route({ method: 'POST', path: '/api/v1/admin/redeems/:id/reject', auth: 'admin', body: S.RejectBody, data: V.AdminRedemption, handler: (r) => redeems.reject(r.params.id, r.body.reason) });
  api.route({ method: 'POST', path: '/api/v1/admin/redeems/:id/cards', auth: 'admin', body: S.CardsBody, data: V.Cards, handler: (r) => redeems.revealAny(r.principal.userId, r.params.id, r.body.verifyToken) });

  api.route({ method: 'POST', path: '/api/v1/admin/orders/:id/confirm-payment', auth: 'admin', body: S.ConfirmPayment, emptyBody: {}, data: V.Order, handler: (r) => orders.confirmPayment(r.params.id, r.body.paymentRef) });
  api.route({ method: 'PATCH', path: '/api/v1/admin/users/:id/plan', auth: 'admin', body: S.UserPlanBody, data: User, handler: (r) => subscriptions.setPlan(r.params.id, r.body) });
  api.route({
    method: 'POST', path: '/api/v1/admin/users/:id/grant-token', auth: 'admin', body: S.GrantBody, emptyBody: null, data: V.Granted,
    handler: (r) => subscriptions.grantTokens(r.principal.userId, r.params.id, r.body?.qty ?? 1),
  });
}
