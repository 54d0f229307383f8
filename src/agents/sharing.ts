// Sharing: one multi-use share link and one single-use invitation token per
// agent (both resolved by /invites/{token}); accepting either makes the
// caller a member, who then sees the agent with sharedWithMe=true and may
// open sessions on it. The owner lists members and removes them.
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { fail } from '../errors.js';
import { MEMBERSHIPS_PER_ACCOUNT, overCap } from '../account-caps.js';
import { randomId } from '../ids.js';
import type { AgentCatalog } from './catalog.js';
import type { AgentManager } from './manage.js';
import { marketView } from './views.js';

type Kind = 'link' | 'invite';
const invitePath = (token: string) => `/api/v1/invites/${token}`;

export class AgentSharing {
  constructor(
    private readonly ctx: HubContext,
    private readonly catalog: AgentCatalog,
    private readonly manager: AgentManager,
  ) {}

  async shareLink(p: Principal, id: string) {
    await this.manager.ownEntry(p.userId, id);
    return this.tokenView(id, 'link', await this.token(id, 'link', false));
  }

  async refreshShareLink(p: Principal, id: string) {
    await this.manager.ownEntry(p.userId, id);
    return this.tokenView(id, 'link', await this.token(id, 'link', true));
  }

  async invites(p: Principal, id: string) {
    await this.manager.ownEntry(p.userId, id);
    const tok = await this.token(id, 'invite', false);
    const rows = await this.ctx.em().getConnection().execute(
      `select m.user_id, u.name, m.via, m.created_at from agent_members m join users u on u.id = m.user_id where m.agent_id = ? order by m.created_at, m.user_id`,
      [id],
    );
    const items = rows.map((r: any) => ({ userId: r.user_id, name: r.name, via: r.via, joinedAt: new Date(r.created_at).toISOString() }));
    return { ...this.tokenView(id, 'invite', tok), items, total: items.length };
  }

  async refreshInvite(p: Principal, id: string) {
    await this.manager.ownEntry(p.userId, id);
    return this.tokenView(id, 'invite', await this.token(id, 'invite', true));
  }

  async removeMember(p: Principal, id: string, userId: string) {
    await this.manager.ownEntry(p.userId, id);
    const rows = await this.ctx.em().transactional(async (em) => {
      const gone = await em.execute(`delete from agent_members where agent_id = ? and user_id = ? returning user_id`, [id, userId]);
      // Remembered: the share link (multi-use) would let the removed user straight back in.
      if (gone.length) await em.execute(`insert into agent_member_removals (agent_id, user_id) values (?, ?) on conflict (agent_id, user_id) do update set removed_at = now()`, [id, userId]);
      return gone;
    });
    if (!rows.length) throw fail('NOT_FOUND', 'no such member');
    this.catalog.usersChanged(userId);
    return { agentId: id, userId, removed: true };
  }

  /** What a token leads to; readable by anyone holding it. */
  async inspect(p: Principal | undefined, token: string) {
    const { agentId, kind } = await this.resolve(token);
    const e = await this.target(agentId, p?.userId);
    const st = p ? await this.catalog.userState(p.userId) : undefined;
    return { token, kind, agent: marketView(e, st), ownerName: e.ownerName, isOwner: e.a.ownerId === p?.userId, joined: !!st?.shared.has(agentId) };
  }

  /** `{accept: true}` joins (an invitation token is then used up); `{accept: false}` changes nothing. */
  async decide(p: Principal, token: string, accept: boolean) {
    const { agentId, kind } = await this.resolve(token);
    const e = await this.target(agentId, p.userId);
    if (e.a.ownerId === p.userId) throw fail('CONFLICT', 'you own this agent');
    if (accept) {
      await this.ctx.em().transactional(async (em) => {
        // An invitation is used up first, and only by the one call whose update took its row: racers
        // that all read it above find it gone here.
        if (kind === 'invite') {
          const used = await em.execute(`update agent_share_tokens set token = ?, created_at = now() where token = ? returning agent_id`, [randomId(24), token]);
          if (!used.length) throw fail('NOT_FOUND', 'invitation not found');
          // The owner's single-use invitation, its own choice: a removal before it is forgiven.
          await em.execute(`delete from agent_member_removals where agent_id = ? and user_id = ?`, [agentId, p.userId]);
        } else if ((await em.execute(`select 1 from agent_member_removals where agent_id = ? and user_id = ?`, [agentId, p.userId])).length) {
          throw fail('FORBIDDEN', 'the owner removed you from this agent: only a new invitation from the owner lets you back');
        }
        const joined = await em.execute(
          `insert into agent_members (agent_id, user_id, via) select ?, ?, ? where (select count(*) from agent_members where user_id = ?) < ? on conflict do nothing returning agent_id`,
          [agentId, p.userId, kind, p.userId, MEMBERSHIPS_PER_ACCOUNT],
        );
        if (!joined.length && !(await em.execute(`select 1 from agent_members where agent_id = ? and user_id = ?`, [agentId, p.userId])).length) {
          throw overCap(MEMBERSHIPS_PER_ACCOUNT, 'shared agents', 'an owner must remove you from one first');
        }
      });
      this.catalog.usersChanged(p.userId);
    }
    const st = await this.catalog.userState(p.userId);
    return { agentId, accepted: accept, sharedWithMe: st.shared.has(agentId) };
  }

  /** The token's agent, as a member would read it: a draft is its owner's alone, token or not. */
  private async target(agentId: string, userId: string | undefined) {
    await this.catalog.fresh();
    const e = this.catalog.get(agentId);
    if (!e || (e.a.usageStatus === 'draft' && e.a.ownerId !== userId)) throw fail('NOT_FOUND', 'invitation not found');
    return e;
  }

  private async resolve(token: string): Promise<{ agentId: string; kind: Kind }> {
    if (token.length > 64) throw fail('NOT_FOUND', 'invitation not found');
    const rows = await this.ctx.em().getConnection().execute(`select agent_id, kind from agent_share_tokens where token = ?`, [token]);
    if (!rows.length) throw fail('NOT_FOUND', 'invitation not found');
    return { agentId: rows[0].agent_id, kind: rows[0].kind };
  }

  /** The agent's current token of this kind, created on first use or replaced when `fresh`. */
  private async token(agentId: string, kind: Kind, replace: boolean): Promise<{ token: string; createdAt: Date }> {
    const conn = this.ctx.em().getConnection();
    const rows = replace
      ? await conn.execute(
          `insert into agent_share_tokens (token, agent_id, kind) values (?, ?, ?) on conflict (agent_id, kind) do update set token = excluded.token, created_at = now() returning token, created_at`,
          [randomId(24), agentId, kind],
        )
      : await conn.execute(
          `with ins as (insert into agent_share_tokens (token, agent_id, kind) values (?, ?, ?) on conflict (agent_id, kind) do nothing returning token, created_at)
           select token, created_at from ins union all select token, created_at from agent_share_tokens where agent_id = ? and kind = ?`,
          [randomId(24), agentId, kind, agentId, kind],
        );
    // A concurrent first use may have inserted a row our statement's snapshot cannot see.
    const r = rows[0] ?? (await conn.execute(`select token, created_at from agent_share_tokens where agent_id = ? and kind = ?`, [agentId, kind]))[0];
    return { token: r.token, createdAt: new Date(r.created_at) };
  }

  private tokenView(agentId: string, kind: Kind, t: { token: string; createdAt: Date }) {
    return { agentId, kind, token: t.token, url: invitePath(t.token), createdAt: t.createdAt.toISOString() };
  }
}
