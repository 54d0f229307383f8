// Administrator review: summary, the pending queue, all agents, one agent's
// review view, approve and reject. Approve → online/approved; reject →
// offline/rejected with rejectReason. Only a pending agent can be decided (409).
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { offsetOf, pageOf } from '../paging.js';
import type { AgentCatalog, Entry } from './catalog.js';
import type { HostLookup } from './hostinfo.js';
import type { AdminListQueryT } from './schemas.js';
import { ownerView } from './views.js';

export class AgentReview {
  constructor(
    private readonly ctx: HubContext,
    private readonly catalog: AgentCatalog,
    private readonly hosts: HostLookup,
  ) {}

  async summary() {
    await this.catalog.fresh();
    const s = { total: 0, pending: 0, approved: 0, rejected: 0, online: 0, public: 0, private: 0 };
    for (const { a } of this.catalog.all()) {
      s.total++;
      if (a.reviewStatus === 'pending') s.pending++;
      if (a.reviewStatus === 'approved') s.approved++;
      if (a.reviewStatus === 'rejected') s.rejected++;
      if (a.usageStatus === 'online') s.online++;
      if (a.scope === 'public') s.public++;
      else s.private++;
    }
    return s;
  }

  /** The review queue, oldest submission first. */
  async pending(q: { page: number; pageSize: number }) {
    await this.catalog.fresh();
    const list = [...this.catalog.all()]
      .filter((e) => e.a.reviewStatus === 'pending')
      .sort((x, y) => (x.a.submittedAt?.getTime() ?? 0) - (y.a.submittedAt?.getTime() ?? 0) || (x.a.id < y.a.id ? -1 : 1));
    return this.page(list, q.page, q.pageSize);
  }

  async list(q: AdminListQueryT) {
    await this.catalog.fresh();
    const kw = q.keyword?.toLowerCase();
    const list = [...this.catalog.all()]
      .filter(({ a, hay, ownerName }) => {
        if (kw && !hay.includes(kw) && !a.id.includes(kw) && !ownerName.toLowerCase().includes(kw)) return false;
        if (q.reviewStatus && a.reviewStatus !== q.reviewStatus) return false;
        if (q.usageStatus && a.usageStatus !== q.usageStatus) return false;
        if (q.scope && a.scope !== q.scope) return false;
        return true;
      })
      .sort((x, y) => y.a.updatedAt.getTime() - x.a.updatedAt.getTime() || (x.a.id < y.a.id ? -1 : 1));
    return this.page(list, q.page, q.pageSize);
  }

  async review(id: string) {
    await this.catalog.fresh();
    const e = this.catalog.get(id);
    if (!e) throw fail('NOT_FOUND', 'agent not found');
    return (await this.views([e]))[0];
  }

  /** `version`: the one the administrator reviewed (content changed while pending raises it: rules.ts). */
  approve(id: string, version?: number) {
    return this.decide(id, version, `usage_status = 'online', review_status = 'approved', reject_reason = null`, []);
  }

  reject(id: string, reason: string, version?: number) {
    return this.decide(id, version, `usage_status = 'offline', review_status = 'rejected', reject_reason = ?`, [reason]);
  }

  private async decide(id: string, version: number | undefined, set: string, params: unknown[]) {
    const rows = await this.ctx.em().getConnection().execute(
      `update agents set ${set}, reviewed_at = now(), updated_at = now() where id = ? and review_status = 'pending' and (?::int is null or version = ?) returning id`,
      [...params, id, version ?? null, version ?? null],
    );
    if (!rows.length) {
      const now = await this.ctx.em().getConnection().execute(`select review_status, version from agents where id = ?`, [id]);
      if (!now.length) throw fail('NOT_FOUND', 'agent not found');
      if (now[0].review_status !== 'pending') throw fail('CONFLICT', 'agent is not pending review');
      throw fail('CONFLICT', `the agent changed since version ${version}: it is at version ${now[0].version}; review it again`);
    }
    this.catalog.agentsChanged(id);
    return this.review(id);
  }

  private async page(list: Entry[], page: number, pageSize: number) {
    const from = offsetOf(page, pageSize);
    return pageOf(await this.views(list.slice(from, from + pageSize)), list.length, page, pageSize);
  }

  private async views(list: Entry[]) {
    const hosts = await this.hosts.info(list.map((e) => e.a.hostId));
    return list.map((e) => ({
      ...ownerView(e, undefined, e.a.hostId ? hosts.get(e.a.hostId) : undefined),
      ownerId: e.a.ownerId,
      submittedAt: e.a.submittedAt ? e.a.submittedAt.toISOString() : null,
      reviewedAt: e.a.reviewedAt ? e.a.reviewedAt.toISOString() : null,
    }));
  }
}
