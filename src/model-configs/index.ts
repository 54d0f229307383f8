// Wires the model-configs domain into a hub: the key vault, configurations,
// host bindings, routes, and the `modelConfig` field of host views.
import type { HubContext } from '../context.js';
import type { HttpApi } from '../server/http.js';
import type { HostGateway } from '../hosts/gateway.js';
import type { HostService } from '../hosts/service.js';
import { Vault } from './vault.js';
import { ModelConfigService } from './service.js';
import { ModelBindings } from './bindings.js';
import { modelConfigRoutes } from './routes.js';
import { HostProbe } from './host-probe.js';
import { ModelSuggest } from './suggest.js';

export interface ModelConfigsModule {
  service: ModelConfigService;
  bindings: ModelBindings;
  /** ai-fill's model call. */
  suggest: ModelSuggest;
  close(): Promise<void>;
}

export function buildModelConfigs(ctx: HubContext, api: HttpApi, hosts: { gateway: HostGateway; service: HostService }): ModelConfigsModule {
  const vault = new Vault(ctx.secrets.vaultKey);
  const service = new ModelConfigService(ctx, vault);
  const bindings = new ModelBindings(ctx, hosts.gateway, service);
  service.onDeliveredChange = (configId) => bindings.resync(configId);
  bindings.start();
  hosts.service.hostExtras.push(async (_userId, views) => {
    const of = await bindings.ofHosts(views.map((h) => h.id));
    for (const h of views) h.modelConfig = of.get(h.id) ?? null;
  });
  modelConfigRoutes(api, ctx.config, service, bindings, new HostProbe(ctx, hosts.gateway));
  return { service, bindings, suggest: new ModelSuggest(ctx, service), close: async () => {
      bindings.close();
      await vault.close();
    },
  };
}

