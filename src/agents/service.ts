// The agents domain, assembled. buildHub constructs one AgentService and
// hands it to agentRoutes; a host's engines come from the hosts domain's rule
// (`engines`); the HostGateway is optional (hostUp reads false without it) and
// may also be wired later with setGateway.
import type { ModelDrafter } from './aifill-model.js';
import type { HubContext } from '../context.js';
import type { HostGateway } from '../hosts/gateway.js';
import { AgentCatalog } from './catalog.js';
import { HostLookup, type HostEngines } from './hostinfo.js';
import { AgentMarket } from './market.js';
import { AgentManager, type BeforeAgentDelete } from './manage.js';
import { AgentReview } from './review.js';
import { AgentSharing } from './sharing.js';

export class AgentService {
  readonly catalog: AgentCatalog;
  readonly hosts: HostLookup;
  readonly market: AgentMarket;
  readonly manager: AgentManager;
  readonly review: AgentReview;
  readonly sharing: AgentSharing;
  /** ai-fill asks a model through this when set (the model-configs domain wires it; hub.ts). */
  modelDrafter: ModelDrafter | undefined;

  constructor(
    private readonly ctx: HubContext,
    /** `engines`: the hosts domain's answer to "which engines does this host of the account report". */
    opts: { engines: HostEngines; gateway?: HostGateway },
  ) {
    this.catalog = new AgentCatalog(ctx);
    this.hosts = new HostLookup(ctx, opts.engines, opts.gateway);
    this.market = new AgentMarket(ctx, this.catalog);
    this.manager = new AgentManager(ctx, this.catalog, this.hosts);
    this.review = new AgentReview(ctx, this.catalog, this.hosts);
    this.sharing = new AgentSharing(ctx, this.catalog, this.manager);
  }

  /** Registers work that must finish before an agent's rows are deleted (the sessions domain stops its runs). */
  onBeforeDelete(hook: BeforeAgentDelete): void {
    this.manager.onBeforeDelete(hook);
  }

  /** Hosts deleted: the database unbound their agents (`on delete set null`); the catalog reloads those rows, here and on every node. */
  hostsRemoved(hostIds: string[]): Promise<void> | void {
    const unbind = () => {
      const gone = new Set(hostIds);
      const ids: string[] = [];
      for (const e of this.catalog.all()) if (e.a.hostId && gone.has(e.a.hostId)) ids.push(e.a.id);
      this.catalog.agentsChanged(...ids);
    };
    const f = this.catalog.fresh();
    return f ? f.then(unbind) : unbind();
  }

  setGateway(g: HostGateway): void {
    this.hosts.setGateway(g);
  }

  /** Loads the catalog so the first market read is warm; subscriptions are live first, so no change slips between. */
  async warm(): Promise<void> {
    await this.ctx.bus.ready();
    await this.catalog.fresh();
  }

  close(): void {
    this.catalog.close();
  }
}
