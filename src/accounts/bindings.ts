// What an account is bound to: its phone, its linked external identities,
// its chat-platform account; and unlinking an identity.
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { Identity, User } from './entities.js';
import { CHATAPP_PROVIDER, bindingView } from './chatapp.js';
import { maskPhone } from './views.js';
import { LOGIN_PROVIDER } from './oidc.js';

export class BindingService {
  constructor(
    private readonly ctx: HubContext,
    /** Ends an account's logins (LoginService.endLogins). */
    private readonly endLogins: (userId: string) => Promise<void>,
  ) {}

  async bindings(userId: string) {
    const em = this.ctx.em();
    const u = await em.findOne(User, { id: userId });
    if (!u) throw fail('NOT_FOUND', 'user not found');
    const ids = await em.find(Identity, { userId }, { orderBy: { createdAt: 'asc' } });
    return {
      phone: u.phone ? { countryCode: u.countryCode, number: maskPhone(u.phone) } : null,
      identities: ids.filter((i) => i.provider !== CHATAPP_PROVIDER).map((i) => ({ provider: i.provider, displayName: i.displayName, linkedAt: i.createdAt.toISOString() })),
      chatapp: bindingView(ids.find((i) => i.provider === CHATAPP_PROVIDER) ?? null),
    };
  }

  /** Refuses to remove the last way into an account that has no API key. */
  async unlinkIdentity(userId: string, provider: string) {
    const em = this.ctx.em();
    const mine = await em.find(Identity, { userId, provider });
    if (!mine.length) throw fail('NOT_FOUND', `no ${provider} identity linked`);
    const [{ n }] = await em.execute(`select count(*)::int as n from api_keys where user_id = ?`, [userId]);
    if (n === 0) throw fail('CONFLICT', 'this identity is the only way to sign in to the account; create an API key first');
    await em.execute(`delete from identities where user_id = ? and provider = ?`, [userId, provider]);
    // Every login of the account came through the sign-in provider's identity: unlinked, they end (a
    // login kept through an identity since unlinked outlived the key that linked it, unseen).
    if (provider === LOGIN_PROVIDER) await this.endLogins(userId);
    return { deleted: true };
  }
}
