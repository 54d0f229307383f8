// Wires the hosts domain into a hub: store, presence, channels (the
// HostGateway), the WebSocket endpoint and the HTTP routes.
import type { HubContext } from '../context.js';
import type { HttpApi } from '../server/http.js';
import type { TemplatedApp } from '../server/uws.js';
import { HostStore } from './store.js';
import { LocalPresence, type Presence } from './presence.js';
import { HostChannels } from './gateway-impl.js';
import { HostService } from './service.js';
import { hostRoutes } from './routes.js';
import { attachHostSocket } from './ws.js';
import type { FailedAuth } from '../ratelimit/failures.js';

export interface HostsModule {
  gateway: HostChannels;
  service: HostService;
  presence: Presence;
  store: HostStore;
  /** Registers the WebSocket endpoint; must run before the HTTP catch-all is attached. */
  attach(app: TemplatedApp): void;
  close(): Promise<void>;
}

/** A host request waits at most this long, and never longer than the heartbeat window. */
const REQUEST_TIMEOUT_MS = 10_000;

export function buildHosts(ctx: HubContext, api: HttpApi, presence: Presence = new LocalPresence(), failures?: FailedAuth): HostsModule {
  const store = new HostStore(ctx);
  const heartbeatTimeoutMs = ctx.config.hostHeartbeatTimeoutMs;
  const gateway = new HostChannels(ctx, presence, store, { heartbeatTimeoutMs, requestTimeoutMs: Math.min(REQUEST_TIMEOUT_MS, heartbeatTimeoutMs) });
  const service = new HostService(ctx, gateway, presence, store);
  hostRoutes(api, service, failures);
  return {
    gateway,
    service,
    presence,
    store,
    attach: (app) => attachHostSocket(app, gateway, store, ctx.log, failures, ctx.config.hostConnectsPerMinute),
    async close() {
      await gateway.close();
      await store.close();
      await presence.close();
    },
  };
}
