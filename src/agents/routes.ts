// HTTP surface of the agents domain: parse, authorize, call the service.
// Static paths (/agents/mine, /featured, …) win over /agents/:id in the router.
import type { HttpApi } from '../server/http.js';
import { created, noContent } from '../server/reply.js';
import type { AgentService } from './service.js';
import { fillDraft } from './aifill.js';
import { AdminListQuery, AgentWrite, AiFillBody, DecideBody, MarketQuery, MineQuery, PageQuery, RejectBody, ApproveBody } from './schemas.js';
import { Facets, Favorite, MarketAgent, OwnerAgent, PageOf, ReviewAgent } from './view-schemas.js';
import * as V from './view-schemas.js';
import Type from 'typebox';

const A = '/api/v1/agents';

export function agentRoutes(api: HttpApi, s: AgentService): void {
  const { market, manager, review, sharing } = s;

  // ---------- market (credentials optional) ----------
  api.route({ method: 'GET', path: A, auth: 'optional', query: MarketQuery, data: PageOf(MarketAgent), handler: (r) => market.list(r.principal, r.query) });
  api.route({ method: 'GET', path: `${A}/featured`, auth: 'optional', data: Type.Array(MarketAgent), handler: (r) => market.featured(r.principal) });
  api.route({ method: 'GET', path: `${A}/facets`, auth: 'optional', data: Facets, handler: (r) => market.facets(r.principal) });
  api.route({ method: 'GET', path: `${A}/:id`, auth: 'optional', data: MarketAgent, handler: (r) => market.get(r.principal, r.params.id) });
  api.route({ method: 'POST', path: `${A}/:id/favorite`, auth: 'user', data: Favorite, handler: (r) => market.setFavorite(r.principal, r.params.id, true) });
  api.route({ method: 'DELETE', path: `${A}/:id/favorite`, auth: 'user', data: Favorite, handler: (r) => market.setFavorite(r.principal, r.params.id, false) });

  // ---------- management (owner only) ----------
  api.route({ method: 'GET', path: `${A}/mine`, auth: 'user', query: MineQuery, data: PageOf(OwnerAgent), handler: (r) => manager.mine(r.principal, r.query) });
  api.route({ method: 'POST', path: A, auth: 'user', body: AgentWrite, data: OwnerAgent, doc: { status: 201 }, handler: async (r) => created(await manager.create(r.principal, r.body)) });
  api.route({ method: 'GET', path: `${A}/:id/manage`, auth: 'user', data: OwnerAgent, handler: (r) => manager.manage(r.principal, r.params.id) });
  api.route({ method: 'PATCH', path: `${A}/:id`, auth: 'user', body: AgentWrite, data: OwnerAgent, handler: (r) => manager.update(r.principal, r.params.id, r.body) });
  api.route({
    method: 'DELETE', path: `${A}/:id`, auth: 'user',
    doc: { raw: { status: 204, description: 'Deleted: no body.' } },
    handler: async (r) => {
      await manager.remove(r.principal, r.params.id);
      return noContent();
    },
  });
  api.route({ method: 'GET', path: `${A}/overview`, auth: 'user', data: V.Overview, handler: (r) => manager.overview(r.principal) });
  api.route({ method: 'GET', path: `${A}/stats/summary`, auth: 'user', data: V.StatsSummary, handler: (r) => manager.statsSummary(r.principal) });
  api.route({ method: 'GET', path: `${A}/:id/stats`, auth: 'user', data: V.AgentStats, handler: (r) => manager.stats(r.principal, r.params.id) });
  api.route({ method: 'POST', path: `${A}/ai-fill`, auth: 'user', body: AiFillBody, data: V.AiFill, handler: (r) => fillDraft(r.principal.userId, r.body, s.modelDrafter) });

  // ---------- sharing ----------
  api.route({ method: 'GET', path: `${A}/:id/share-link`, auth: 'user', data: V.ShareToken, handler: (r) => sharing.shareLink(r.principal, r.params.id) });
  api.route({ method: 'POST', path: `${A}/:id/share-link/refresh`, auth: 'user', data: V.ShareToken, handler: (r) => sharing.refreshShareLink(r.principal, r.params.id) });
  api.route({ method: 'GET', path: `${A}/:id/invites`, auth: 'user', data: V.Invites, handler: (r) => sharing.invites(r.principal, r.params.id) });
  api.route({ method: 'POST', path: `${A}/:id/invites/refresh`, auth: 'user', data: V.ShareToken, handler: (r) => sharing.refreshInvite(r.principal, r.params.id) });
  api.route({ method: 'DELETE', path: `${A}/:id/invites/:userId`, auth: 'user', data: V.MemberRemoved, handler: (r) => sharing.removeMember(r.principal, r.params.id, r.params.userId) });
  api.route({ method: 'GET', path: '/api/v1/invites/:token', auth: 'optional', data: V.Invitation, handler: (r) => sharing.inspect(r.principal, r.params.token) });
  api.route({ method: 'POST', path: '/api/v1/invites/:token/decide', auth: 'user', body: DecideBody, data: V.Decided, handler: (r) => sharing.decide(r.principal, r.params.token, r.body.accept) });

  // ---------- administrator review ----------
  const R = '/api/v1/admin/agents';
  api.route({ method: 'GET', path: `${R}/summary`, auth: 'admin', data: V.ReviewSummary, handler: () => review.summary() });
  api.route({ method: 'GET', path: `${R}/pending`, auth: 'admin', query: PageQuery, data: PageOf(ReviewAgent), handler: (r) => review.pending(r.query) });
  api.route({ method: 'GET', path: R, auth: 'admin', query: AdminListQuery, data: PageOf(ReviewAgent), handler: (r) => review.list(r.query) });
  api.route({ method: 'GET', path: `${R}/:id/review`, auth: 'admin', data: ReviewAgent, handler: (r) => review.review(r.params.id) });
  api.route({ method: 'POST', path: `${R}/:id/approve`, auth: 'admin', body: ApproveBody, emptyBody: {}, data: ReviewAgent, handler: (r) => review.approve(r.params.id, r.body.version) });
  api.route({ method: 'POST', path: `${R}/:id/reject`, auth: 'admin', body: RejectBody, data: ReviewAgent, handler: (r) => review.reject(r.params.id, r.body.reason, r.body.version) });
}
