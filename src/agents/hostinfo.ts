// What agents need from hosts: the owner's host with its reported engines
// (for create/update checks), and name + up/down for owner views. hostUp
// comes from the HostGateway when one is wired, else reads false.
import type { HubContext } from '../context.js';
import type { HostGateway } from '../hosts/gateway.js';
import type { HostInfo } from './views.js';

export class HostLookup {
  constructor(
    private readonly ctx: HubContext,
    private gateway?: HostGateway,
  ) {}

  setGateway(g: HostGateway): void {
    this.gateway = g;
  }

  /**
   * The caller's host and the engine ids it reports, or undefined when missing or not owned. While the host is
   * connected, what it reports now (its hello or `engines` frame, in presence before the hub answers it): the row
   * learns it in a batched write that may land later. Offline (or presence unreadable), what the row holds.
   */
  async owned(userId: string, hostId: string): Promise<{ engines: string[] } | undefined> {
    const [rows, live] = await Promise.all([
      this.ctx.em().getConnection().execute(`select engines from hosts where id = ? and user_id = ?`, [hostId, userId]),
      this.gateway?.presenceMany([hostId]).then((m) => m.get(hostId), () => undefined),
    ]);
    if (!rows.length) return undefined;
    if (live && live.status !== 'offline') return { engines: live.engines.map((e) => e.id) };
    const engines = typeof rows[0].engines === 'string' ? JSON.parse(rows[0].engines) : rows[0].engines;
    return { engines: (engines ?? []).map((e: { id: string }) => e.id) };
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
