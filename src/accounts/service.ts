// Users and their API keys. Pure domain: no HTTP here.
import { API_KEYS_PER_ACCOUNT, refuseOverCap } from '../account-caps.js';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import { offsetOf, pageOf } from '../paging.js';
import type { Authenticator } from './authenticator.js';
import { ApiKey, User, type Role } from './entities.js';
import { generateApiKey, hashSecret, keyPreview } from './keys.js';
import { keyView, userView } from './views.js';
import { grantStarterTokens } from '../billing/ledger.js';

/** A host row that went with a deleted account. */
export interface RemovedHost {
  id: string;
  credentialHash: string;
}

export class AccountService {
  /** Set by the hosts domain: revokes the credentials and closes the channels of an account's hosts once it is deleted. */
  onHostsRemoved?: (hosts: RemovedHost[]) => void;

  constructor(
    private readonly ctx: HubContext,
    private readonly auth: Authenticator,
  ) {}

  async getUser(userId: string): Promise<User> {
    const u = await this.ctx.em().findOne(User, { id: userId });
    if (!u) throw fail('NOT_FOUND', 'user not found');
    return u;
  }

  /** Creates a user with a first API key; the key is returned once. */
  async createUser(name: string, role: Role = 'user', fixedKey?: string) {
    const em = this.ctx.em();
    const user = Object.assign(new User(), { id: newId('usr'), name, role });
    const key = fixedKey ?? generateApiKey();
    const k = Object.assign(new ApiKey(), { id: newId('key'), userId: user.id, name: 'default', hash: hashSecret(key), preview: keyPreview(key) });
    await em.transactional(async (tx) => {
      tx.persist(user);
      await tx.flush();
      tx.persist(k);
      await tx.flush();
      user.balance = (await grantStarterTokens(tx, user.id, this.ctx.config.starterTokens)) || user.balance;
    });
    return { user: userView(user), apiKey: key };
  }

  /** `currentKeyId`: the key the caller signed this request with, marked so a console knows its own. */
  async listKeys(userId: string, currentKeyId: string | undefined) {
    const keys = await this.ctx.em().find(ApiKey, { userId }, { orderBy: { createdAt: 'asc' } });
    return { items: keys.map((k) => ({ ...keyView(k), current: k.id === currentKeyId })), total: keys.length };
  }

  async createKey(userId: string, name: string) {
    const em = this.ctx.em();
    refuseOverCap(await em.count(ApiKey, { userId }), API_KEYS_PER_ACCOUNT, 'API keys');
    const key = generateApiKey();
    const k = Object.assign(new ApiKey(), { id: newId('key'), userId, name, hash: hashSecret(key), preview: keyPreview(key) });
    await em.persist(k).flush();
    return { ...keyView(k), key };
  }

  async refreshKey(userId: string, keyId: string) {
    const em = this.ctx.em();
    const k = await em.findOne(ApiKey, { id: keyId, userId });
    if (!k) throw fail('NOT_FOUND', 'key not found');
    const oldHash = k.hash;
    const key = generateApiKey();
    k.hash = hashSecret(key);
    k.preview = keyPreview(key);
    k.lastUsedAt = null;
    await em.flush();
    this.auth.revokeKeyHash(oldHash);
    return { ...keyView(k), key };
  }

  async deleteKey(userId: string, keyId: string) {
    const em = this.ctx.em();
    const k = await em.findOne(ApiKey, { id: keyId, userId });
    if (!k) throw fail('NOT_FOUND', 'key not found');
    await em.remove(k).flush();
    this.auth.revokeKeyHash(k.hash);
    return { deleted: true };
  }

  async listUsers(q: { keyword?: string; role?: string; page: number; pageSize: number }) {
    const em = this.ctx.em();
    const where: Record<string, unknown> = {};
    if (q.keyword) where.$or = [{ name: { $ilike: `%${escapeLike(q.keyword)}%` } }, { id: q.keyword }, { email: { $ilike: `%${escapeLike(q.keyword)}%` } }];
    if (q.role) where.role = q.role;
    const [rows, total] = await em.findAndCount(User, where, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: q.pageSize, offset: offsetOf(q.page, q.pageSize) });
    return pageOf(rows.map(userView), total, q.page, q.pageSize);
  }

  async usersSummary() {
    const rows = await this.ctx.em().getConnection().execute(
      `select count(*)::int as total,
              count(*) filter (where role = 'admin')::int as admins,
              count(*) filter (where created_at >= now() - interval '1 day')::int as new_today,
              count(*) filter (where created_at >= now() - interval '7 days')::int as new_week,
              count(*) filter (where plan_id is not null and (plan_expire_at is null or plan_expire_at > now()))::int as subscribed
         from users`,
    );
    const r = rows[0];
    return { total: r.total, admins: r.admins, newToday: r.new_today, newThisWeek: r.new_week, subscribed: r.subscribed };
  }

  async deleteUser(actorId: string, userId: string) {
    if (actorId === userId) throw fail('CONFLICT', 'an administrator cannot delete their own account');
    const rows = await this.ctx.em().transactional(async (tx) => {
      // Both rows locked in id order, and the actor read under the lock: two administrators deleting each
      // other at once were both authenticated before either delete committed, and both went (the hub
      // could be left without one). The second now finds its own account gone.
      const held = await tx.execute(`select id, role from users where id in (?, ?) order by id for update`, [actorId, userId]);
      if (!held.some((r) => r.id === actorId && r.role === 'admin')) throw fail('UNAUTHENTICATED', 'your administrator account was deleted or demoted');
      // Its pending redemptions go with it (on delete cascade): their units go back to stock, as a
      // rejection's do. Locked first, so a rejection racing this delete restores them once.
      await tx.execute(
        `update products p set stock = p.stock + r.qty
           from (select product_id, sum(qty)::int as qty
                   from (select product_id, qty from redemptions where user_id = ? and status = 'pending' for update) x
                  group by product_id) r
          where p.id = r.product_id and p.stock is not null`,
        [userId],
      );
      // One statement: the account goes (its hosts rows cascade with it) and we learn which hosts it had,
      // so their credentials are revoked and their channels closed at once, on every node. Its agents' ids
      // are retired as one agent's deletion retires its id (agents/manage.ts).
      return tx.execute(
        `with h as (select id, credential_hash from hosts where user_id = ?),
              r as (insert into agent_ids_retired (id, owner_id) select id, owner_id from agents where owner_id = ? on conflict do nothing),
              d as (delete from users where id = ? returning id)
         select (select count(*) from d)::int as deleted, h.id, h.credential_hash from (select 1) one left join h on true`,
        [userId, userId, userId],
      );
    });
    if (!rows.length || rows[0].deleted === 0) throw fail('NOT_FOUND', 'user not found');
    this.auth.revokeUser(userId);
    const hosts = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id as string, credentialHash: r.credential_hash as string }));
    if (hosts.length) this.onHostsRemoved?.(hosts);
    return { deleted: true };
  }
}

export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}
