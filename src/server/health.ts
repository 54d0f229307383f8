// GET /api/v1/health: for load balancers and container health checks (an
// addition to the spec). Plain body, 200 when this node can serve, 503 when
// its database or bus is down or it is draining for shutdown.
import type { HttpApi } from './http.js';
import Type from 'typebox';
import { plain } from './reply.js';
import { literals } from './schema.js';
import type { HubContext } from '../context.js';

const DB_CHECK_TIMEOUT_MS = 2000;

async function databaseUp(ctx: HubContext): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      ctx.em().getConnection().execute('select 1').then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), DB_CHECK_TIMEOUT_MS))),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export const HealthBody = Type.Object({
  status: literals(['ok', 'degraded', 'draining']),
  node: Type.String(),
  db: literals(['ok', 'down']),
  bus: literals(['local', 'redis', 'down']),
});

export function healthRoutes(api: HttpApi, ctx: HubContext, draining: () => boolean): void {
  api.route({
    method: 'GET',
    path: '/api/v1/health',
    auth: 'none',
    doc: { raw: { status: 200, contentType: 'application/json', description: 'A plain `{status, node, db, bus}` (not enveloped); 503 when degraded or draining.', schema: HealthBody } },
    handler: async () => {
      const db = (await databaseUp(ctx)) ? 'ok' : 'down';
      const bus = ctx.bus.healthy() ? ctx.bus.kind : 'down';
      const status = draining() ? 'draining' : db === 'ok' && bus !== 'down' ? 'ok' : 'degraded';
      return plain(status === 'ok' ? 200 : 503, { status, node: ctx.config.nodeId, db, bus });
    },
  });
}
