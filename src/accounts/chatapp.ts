// Binding a chat-platform account: the user asks for a one-time code, sends
// it to the platform's bot, and the bot confirms it to the hub over
// POST /api/v1/chatapp/confirm, authenticated by CHATAPP_WEBHOOK_SECRET. The
// binding itself is an identity with provider 'chatapp'.
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import { hashSecret } from './keys.js';
import { Identity, User } from './entities.js';

export const CHATAPP_PROVIDER = 'chatapp';
export const ATTEMPT_TTL_MS = 10 * 60_000;
// No 0/O, 1/I/L: the code is typed by hand into a chat.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LEN = 8;

export function bindingView(i: Identity | null) {
  return i
    ? { bound: true, chatUserId: i.subject, displayName: i.displayName, boundAt: i.createdAt.toISOString() }
    : { bound: false, chatUserId: null, displayName: null, boundAt: null };
}

export class ChatappBinding {
  constructor(private readonly ctx: HubContext) {}

  async createAttempt(userId: string) {
    let code = '';
    for (let i = 0; i < CODE_LEN; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
    const id = newId('cba');
    const expiresAt = new Date(Date.now() + ATTEMPT_TTL_MS);
    const em = this.ctx.em();
    // One live attempt per account: a new one replaces the pending ones (and long-expired ones of anybody are swept).
    await em.execute(
      `delete from chatapp_attempts where (user_id = ? and status = 'pending') or (status = 'pending' and expires_at < now() - interval '1 day')`,
      [userId],
    );
    await em.execute(`insert into chatapp_attempts (id, user_id, code_hash, expires_at) values (?, ?, ?, ?)`, [id, userId, hashSecret(code), expiresAt]);
    return { id, code, status: 'pending', expiresAt: expiresAt.toISOString() };
  }

  async attempt(userId: string, id: string) {
    const rows = await this.ctx.em().execute(`select id, status, expires_at, bound_at from chatapp_attempts where id = ? and user_id = ?`, [id, userId]);
    if (!rows.length) throw fail('NOT_FOUND', 'binding attempt not found');
    const r = rows[0];
    const expiresAt = new Date(r.expires_at);
    const status = r.status === 'bound' ? 'bound' : expiresAt.getTime() <= Date.now() ? 'expired' : 'pending';
    return { id: r.id, status, expiresAt: expiresAt.toISOString(), boundAt: r.bound_at ? new Date(r.bound_at).toISOString() : null };
  }

  async binding(userId: string) {
    return bindingView(await this.ctx.em().findOne(Identity, { userId, provider: CHATAPP_PROVIDER }));
  }

  async unbind(userId: string) {
    const rows = await this.ctx.em().execute(`delete from identities where user_id = ? and provider = ? returning id`, [userId, CHATAPP_PROVIDER]);
    if (!rows.length) throw fail('NOT_FOUND', 'no chat-platform binding');
    return { deleted: true };
  }

  /** Called by the bot. `secret` is the shared secret it presented. */
  async confirm(secret: string | undefined, b: { code: string; chatUserId: string; displayName?: string }) {
    const want = this.ctx.config.chatappWebhookSecret;
    if (!want) throw fail('NOT_CONFIGURED', 'chat-platform binding is not configured (CHATAPP_WEBHOOK_SECRET)');
    const a = Buffer.from(hashSecret(secret ?? ''), 'hex');
    if (!secret || !timingSafeEqual(a, Buffer.from(hashSecret(want), 'hex'))) throw fail('UNAUTHENTICATED', 'wrong chat-platform webhook secret');
    const em = this.ctx.em();
    const result = await em.transactional(async (tx) => {
      const rows = await tx.execute(
        `update chatapp_attempts set status = 'bound', bound_at = now(), chat_user_id = ? where code_hash = ? and status = 'pending' and expires_at > now() returning id, user_id`,
        [b.chatUserId, hashSecret(b.code.toUpperCase())],
      );
      if (!rows.length) throw fail('NOT_FOUND', 'binding code unknown, used or expired');
      const userId: string = rows[0].user_id;
      const other = await tx.findOne(Identity, { provider: CHATAPP_PROVIDER, subject: b.chatUserId });
      if (other && other.userId !== userId) throw fail('CONFLICT', 'this chat account is bound to another hub account');
      await tx.execute(`delete from identities where user_id = ? and provider = ?`, [userId, CHATAPP_PROVIDER]);
      // A racing confirm of the same chat user for another account may have inserted since the read: the database decides.
      const added = await tx.execute(`insert into identities (id, user_id, provider, subject, display_name) values (?, ?, ?, ?, ?) on conflict do nothing returning id`, [
        newId('idn'), userId, CHATAPP_PROVIDER, b.chatUserId, b.displayName ?? null,
      ]);
      if (!added.length) throw fail('CONFLICT', 'this chat account is bound to another hub account');
      const u = await tx.findOneOrFail(User, { id: userId });
      return { attemptId: rows[0].id as string, userName: u.name };
    });
    return { bound: true, ...result };
  }
}
