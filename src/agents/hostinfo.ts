// What agents need from hosts: the owner's host with its reported engines
// (for create/update checks, by the hosts domain's rule), and name + up/down
// for owner views. hostUp comes from the HostGateway when one is wired, else
// reads false.
import type { HubContext } from '../context.js';
import { HubError } from '../errors.js';
import type { Engine } from '../../host-protocol/frames.js';
import type { HostGateway } from '../hosts/gateway.js';
import type { HostInfo } from './views.js';

/** The engines a host of the account reports (hosts/service.ts: live while connected, else stored); NOT_FOUND when it is not the account's. */
export type HostEngines = (userId: string, hostId: string) => Promise<Engine[]>;

export class HostLookup {
  constructor(
    private readonly ctx: HubContext,
    private readonly engines: HostEngines,
    private gateway?: HostGateway,
  ) {}

  setGateway(g: HostGateway): void {
    this.gateway = g;
  }

  /** The caller's host and the engine ids it reports, or undefined when missing or not owned. */
  async owned(userId: string, hostId: string): Promise<{ engines: string[] } | undefined> {
    try {
      return { engines: (await this.engines(userId, hostId)).map((e) => e.id) };
    } catch (e) {
      if (e instanceof HubError && e.kind === 'NOT_FOUND') return undefined;
      throw e;
    }
  }

  async info(hostIds: Array<string | null>): Promise<Map<string, HostInfo>> {
    const ids = [...new Set(hostIds.filter((h): h is string => !!h))];
    const out = new Map<string, HostInfo>();
    if (!ids.length) return out;
    const rows = await this.ctx.em().getConnection().execute(`select id, name from hosts where id in (${ids.map(() => '?').join(',')})`, ids);
    let presence: Map<string, { status: string }> | undefined;
    if (this.gateway) {
      try {
        presence = await this.gateway.presenceMany(ids);
      } catch (e) {
        this.ctx.log.warn('host presence unavailable', { err: e });
      }
    }
    for (const r of rows) {
      const p = presence?.get(r.id);
      out.set(r.id, { name: r.name, up: !!p && p.status !== 'offline' });
    }
    return out;
  }
}
