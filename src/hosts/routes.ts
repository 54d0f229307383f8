// HTTP routes of the hosts domain: parse, authorize, call the service.
import Type from 'typebox';
import type { HttpApi } from '../server/http.js';
import { compileBody, compileQuery } from '../server/schema.js';
import { created } from '../server/reply.js';
import { DirsResult, Engine } from '../../host-protocol/frames.js';
import { AvailableHosts, HeartbeatAnswer, Host, HostDeleted, HostList, PairKey, Paired } from './view-schemas.js';
import type { HostService } from './service.js';
import type { FailedAuth } from '../ratelimit/failures.js';

const Pair = compileBody(
  Type.Object(
    { pairKey: Type.String({ minLength: 1, maxLength: 200 }), name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })) },
    { additionalProperties: false },
  ),
);
const Remark = compileBody(Type.Object({ remark: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]) }, { additionalProperties: false }));
const Dirs = compileQuery(Type.Object({ path: Type.String({ maxLength: 500, default: '' }) }, { additionalProperties: false }));
const Heartbeat = compileBody(
  Type.Object(
    {
      capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      running: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
      engines: Type.Optional(Type.Array(Engine, { maxItems: 50 })),
    },
    { additionalProperties: false },
  ),
);

export function hostRoutes(api: HttpApi, hosts: HostService, failures?: FailedAuth): void {
  // Routes that check a credential themselves (a pair key, a host credential) count failures per IP like the bearer check does.
  const guarded = <T>(r: Parameters<FailedAuth['guard']>[0], check: () => Promise<T>) => (failures ? failures.guard(r, check) : check());
  api.route({ method: 'POST', path: '/api/v1/hosts/pair-key', auth: 'user', data: PairKey, doc: { status: 201 }, handler: async (r) => created(await hosts.createPairKey(r.principal.userId)) });
  // The CLI proves itself with the pair key in the body, not a bearer token (an addition to the spec).
  api.route({
    method: 'POST', path: '/api/v1/hosts/pair', auth: 'none', body: Pair, data: Paired, doc: { status: 201, summary: 'Exchange a pair key (in the body) for a host credential' },
    handler: async (r) => created(await guarded(r, () => hosts.pair(r.body.pairKey, r.body.name ?? 'host'))),
  });
  api.route({
    method: 'POST', path: '/api/v1/hosts/heartbeat', auth: 'none', body: Heartbeat, emptyBody: {}, data: HeartbeatAnswer,
    doc: { summary: 'A host that polls: authenticated by its host credential as the bearer token' },
    handler: (r) => guarded(r, () => hosts.heartbeat(r.bearer, r.body)),
  });
  api.route({ method: 'GET', path: '/api/v1/hosts', auth: 'user', data: HostList, handler: (r) => hosts.list(r.principal.userId) });
  api.route({ method: 'GET', path: '/api/v1/hosts/:id', auth: 'user', data: Host, handler: (r) => hosts.get(r.principal.userId, r.params.id) });
  api.route({ method: 'DELETE', path: '/api/v1/hosts/:id', auth: 'user', data: HostDeleted, handler: (r) => hosts.remove(r.principal.userId, r.params.id) });
  api.route({ method: 'GET', path: '/api/v1/hosts/:id/engines', auth: 'user', data: Type.Array(Engine), handler: (r) => hosts.engines(r.principal.userId, r.params.id) });
  api.route({
    method: 'GET', path: '/api/v1/hosts/:id/directories', auth: 'user', query: Dirs, data: DirsResult,
    handler: (r) => hosts.directories(r.principal.userId, r.params.id, r.query.path),
  });
  api.route({ method: 'POST', path: '/api/v1/hosts/:id/refresh', auth: 'user', emptyBody: {}, data: Host, handler: (r) => hosts.refresh(r.principal.userId, r.params.id) });
  api.route({
    method: 'PATCH', path: '/api/v1/hosts/:id/remark', auth: 'user', body: Remark, data: Host,
    handler: (r) => hosts.setRemark(r.principal.userId, r.params.id, r.body.remark),
  });
  api.route({ method: 'GET', path: '/api/v1/agents/available-hosts', auth: 'user', data: AvailableHosts, handler: (r) => hosts.available(r.principal.userId) });
}
