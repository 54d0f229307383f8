// Browser login through the external identity provider, and the logins it
// creates: a login is an auth_sessions row holding the hash of a rotating
// refresh token; access JWTs carry its id (`sid`) so logout ends them at once.
// The same flow, started by a signed-in user, links the provider identity to
// that user instead (purpose 'link').
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { newId, randomId } from '../ids.js';
import type { Authenticator } from './authenticator.js';
import { AuthSession, Identity, User } from './entities.js';
import { grantStarterTokens } from '../billing/ledger.js';
import { hashSecret } from './keys.js';
import { LOGIN_PROVIDER, OidcClient } from './oidc.js';
import { signAccessToken, verifyAccessToken, looksLikeJwt } from './tokens.js';
import { userView } from './views.js';
import { LINKS_PENDING_PER_ACCOUNT, LOGINS_PER_ACCOUNT, overCap } from '../account-caps.js';

const STATE_TTL_MS = 10 * 60_000;
const REFRESH_PREFIX = 'ahr_';
/**
 * A refresh token names its login and its rotation, signed by the hub (`ahr_<sid>.<n>.<nonce>.<mac>`): a
 * rotated one presented again is known as that login's, however many rotations came since, and a made-up
 * one (the sid is readable in every access token) is not.
 */
const REFRESH_PARTS = /^ahr_(lgn_[0-9A-Za-z]{16})\.(\d{1,9})\.([0-9A-Za-z]{40})\.([A-Za-z0-9_-]{32})$/;
/** Seconds the token rotated last may come again without ending the login (a client's own racing refreshes). */
const REUSE_GRACE_S = 10;

export class LoginService {
  private readonly oidc?: OidcClient;
  constructor(
    private readonly ctx: HubContext,
    private readonly auth: Authenticator,
  ) {
    if (ctx.config.oidc) this.oidc = new OidcClient(ctx.config.oidc);
  }

  private provider(): OidcClient {
    if (!this.oidc) throw fail('NOT_CONFIGURED', 'external identity login is not configured (OIDC_ISSUER and OIDC_CLIENT_* variables)');
    return this.oidc;
  }

  /** The sign-in providers a web app may offer (none when OIDC is not configured); public, holds no secret. */
  providers() {
    const o = this.ctx.config.oidc;
    return { items: o ? [{ id: LOGIN_PROVIDER, name: o.name ?? new URL(o.issuer).host }] : [] };
  }

  /**
   * Starts one login attempt: its state (stored as a hash), PKCE verifier and
   * nonce are kept server-side, single use, for STATE_TTL_MS.
   */
  async start(opts: { from?: string; linkUserId?: string }) {
    const client = this.provider();
    const attempt = client.newAttempt();
    const url = await client.authorizeUrl(attempt); // discovery first: an unreachable provider stores nothing
    const expiresAt = new Date(Date.now() + STATE_TTL_MS);
    // Abandoned flows leave attempts behind; sweep them while we are here.
    await this.ctx.em().execute(`delete from login_states where expires_at < now()`);
    // An account holds at most LINKS_PENDING_PER_ACCOUNT live link attempts (each call kept a row for
    // 10 minutes, without bound per account); decided in the insert, so racing starts overshoot by few.
    const added = await this.ctx.em().execute(
      `insert into login_states (hash, purpose, provider, user_id, from_path, expires_at, code_verifier, nonce)
       select ?, ?, ?, ?, ?, ?, ?, ?
        where ?::text is null or (select count(*) from login_states where user_id = ? and purpose = 'link' and expires_at > now()) < ?
       returning hash`,
      [hashSecret(attempt.state), opts.linkUserId ? 'link' : 'login', LOGIN_PROVIDER, opts.linkUserId ?? null, opts.from ?? null, expiresAt, attempt.codeVerifier, attempt.nonce,
        opts.linkUserId ?? null, opts.linkUserId ?? null, LINKS_PENDING_PER_ACCOUNT],
    );
    if (!added.length) throw overCap(LINKS_PENDING_PER_ACCOUNT, 'identity links in progress', 'finish one, or start again in 10 minutes');
    return { url, state: attempt.state, expiresAt: expiresAt.toISOString() };
  }

  /** `callerId`: the signed-in caller finishing the flow, if any (a link needs the account that started it). */
  async callback(code: string, state: string, callerId?: string) {
    const client = this.provider();
    const em = this.ctx.em();
    // Consume the attempt first: a replayed or raced callback finds nothing.
    const rows = await em.execute(`delete from login_states where hash = ? returning purpose, user_id, from_path, expires_at, code_verifier, nonce`, [hashSecret(state)]);
    if (!rows.length || new Date(rows[0].expires_at).getTime() <= Date.now()) throw fail('VALIDATION', 'body/state: unknown, expired or already used');
    const st = rows[0];
    // Link CSRF: a link started by one account and finished in another's browser would hand that
    // person's identity to the first. The attempt stays spent; the code is never redeemed.
    if (st.purpose === 'link' && callerId !== st.user_id) throw fail('VALIDATION', 'body/state: a link is finished signed in as the account that started it');
    // Nothing is created or issued unless the ID token verifies.
    const who = await client.exchange(code, st.code_verifier, st.nonce);
    const userId = st.purpose === 'link' ? await this.link(st.user_id, who.sub, who.name) : await this.findOrCreate(who);
    const out = await this.issue(userId);
    return { ...out, from: st.from_path ?? null, linked: st.purpose === 'link' ? LOGIN_PROVIDER : null };
  }

  private async findOrCreate(who: { sub: string; name: string | null; email: string | null }): Promise<string> {
    const em = this.ctx.em();
    const found = await em.findOne(Identity, { provider: LOGIN_PROVIDER, subject: who.sub });
    if (found) return found.userId;
    const name = (who.name ?? who.email?.split('@')[0] ?? 'user').slice(0, 80);
    const user = Object.assign(new User(), { id: newId('usr'), name, email: who.email });
    const ident = Object.assign(new Identity(), { id: newId('idn'), userId: user.id, provider: LOGIN_PROVIDER, subject: who.sub, displayName: who.name ?? who.email });
    try {
      await em.transactional(async (tx) => {
        tx.persist(user);
        await tx.flush();
        tx.persist(ident);
        await tx.flush();
        // Once per external identity, whatever became of its earlier accounts (unlinked, deleted).
        const first = await tx.execute(`insert into starter_grants (provider, subject) values (?, ?) on conflict do nothing returning 1`, [LOGIN_PROVIDER, who.sub]);
        if (first.length) await grantStarterTokens(tx, user.id, this.ctx.config.starterTokens);
      });
      return user.id;
    } catch (e) {
      // Two first logins of one person raced: the other created the user.
      const again = await this.ctx.em().findOne(Identity, { provider: LOGIN_PROVIDER, subject: who.sub });
      if (again) return again.userId;
      throw e;
    }
  }

  private async link(userId: string, sub: string, displayName: string | null): Promise<string> {
    const em = this.ctx.em();
    // The database decides a race (one identity per provider per account, one account per identity);
    // the read after it only says which rule refused.
    const added = await em.execute(
      `insert into identities (id, user_id, provider, subject, display_name) values (?, ?, ?, ?, ?) on conflict do nothing returning id`,
      [newId('idn'), userId, LOGIN_PROVIDER, sub, displayName],
    );
    if (added.length) return userId;
    const found = await em.findOne(Identity, { provider: LOGIN_PROVIDER, subject: sub });
    if (found?.userId === userId) return userId; // linked already
    if (found) throw fail('CONFLICT', 'this external identity is linked to another account');
    throw fail('CONFLICT', 'another identity of this provider is already linked; unlink it first');
  }

  /**
   * A new login for the user: its row, a refresh token and a first access token. The account's ended
   * logins go (a row per sign-in was kept for good), and past LOGINS_PER_ACCOUNT live ones the oldest end.
   */
  private async issue(userId: string) {
    const em = this.ctx.em();
    const sid = newId('lgn');
    const refreshToken = this.newRefreshToken(sid, 0);
    const expiresAt = new Date(Date.now() + this.ctx.config.refreshTtlSeconds * 1000);
    await em.execute(`delete from auth_sessions where user_id = ? and (revoked_at is not null or expires_at <= now())`, [userId]);
    em.persist(Object.assign(new AuthSession(), { id: sid, userId, refreshHash: hashSecret(refreshToken), expiresAt }));
    await em.flush();
    const ended = await em.execute(
      `update auth_sessions set revoked_at = now()
        where id in (select id from auth_sessions where user_id = ? and revoked_at is null order by created_at desc, id desc offset ?)
        returning id`,
      [userId, LOGINS_PER_ACCOUNT],
    );
    for (const r of ended) this.auth.revokeSession(r.id);
    return this.tokens(userId, sid, refreshToken, expiresAt);
  }

  /** Ends every live login of the account (an identity unlinked: the logins made through it). */
  async endLogins(userId: string): Promise<void> {
    const ended = await this.ctx.em().execute(`update auth_sessions set revoked_at = now() where user_id = ? and revoked_at is null returning id`, [userId]);
    for (const r of ended) this.auth.revokeSession(r.id);
  }

  private async tokens(userId: string, sid: string, refreshToken: string, refreshExpiresAt: Date) {
    const user = await this.ctx.em().findOneOrFail(User, { id: userId });
    const accessToken = await signAccessToken(this.ctx.secrets.jwtKey, { sub: userId, sid }, this.ctx.config.jwtTtlSeconds);
    return {
      accessToken,
      tokenType: 'Bearer',
      expiresIn: this.ctx.config.jwtTtlSeconds,
      refreshToken,
      refreshExpiresAt: refreshExpiresAt.toISOString(),
      user: userView(user),
    };
  }

  private refreshMac(sid: string, n: number, nonce: string): string {
    return createHmac('sha256', this.ctx.secrets.jwtKey).update(`refresh|${sid}|${n}|${nonce}`).digest('base64url').slice(0, 32);
  }

  private newRefreshToken(sid: string, n: number): string {
    const nonce = randomId(40);
    return `${REFRESH_PREFIX}${sid}.${n}.${nonce}.${this.refreshMac(sid, n, nonce)}`;
  }

  /** The login and rotation a refresh token of this hub's names; undefined for any other string. */
  private refreshOrigin(token: string): { sid: string; n: number } | undefined {
    const m = REFRESH_PARTS.exec(token);
    if (!m) return undefined;
    const want = Buffer.from(this.refreshMac(m[1]!, Number(m[2]), m[3]!));
    const got = Buffer.from(m[4]!);
    return want.length === got.length && timingSafeEqual(want, got) ? { sid: m[1]!, n: Number(m[2]) } : undefined;
  }

  /**
   * Rotates the refresh token: the presented one stops working; the login's expiry slides forward. A
   * rotated token presented again proves two parties hold the login (its user and whoever copied the
   * token): the whole login ends, its access tokens on every node too (RFC 9700 §4.14.2).
   */
  async refresh(token: string) {
    const em = this.ctx.em();
    const oldHash = hashSecret(token);
    const [s] = (await em.execute(`select id, user_id, revoked_at, expires_at, rotation from auth_sessions where refresh_hash = ?`, [oldHash])) as Array<{
      id: string; user_id: string; revoked_at: Date | null; expires_at: Date | string; rotation: number;
    }>;
    if (!s) {
      // A token this login issued and rotated away ends it; a made-up one does not (refreshOrigin). The token
      // rotated last is forgiven for a moment: two requests refreshing together with it are one client racing itself.
      const o = this.refreshOrigin(token);
      const ended = o
        ? await em.execute(
            `update auth_sessions set revoked_at = now()
              where id = ? and revoked_at is null and ? < rotation
                and not (? = rotation - 1 and rotated_at > now() - make_interval(secs => ?))
             returning id`,
            [o.sid, o.n, o.n, REUSE_GRACE_S],
          )
        : [];
      if (ended.length) this.auth.revokeSession(o!.sid);
      throw fail('UNAUTHENTICATED', ended.length ? 'refresh token already used: the login is ended; sign in again' : 'refresh token invalid, rotated or revoked');
    }
    if (s.revoked_at) throw fail('UNAUTHENTICATED', 'refresh token invalid, rotated or revoked');
    if (new Date(s.expires_at).getTime() <= Date.now()) throw fail('TOKEN_EXPIRED', 'refresh token expired; sign in again');
    const rotation = Number(s.rotation);
    const refreshToken = this.newRefreshToken(s.id, rotation + 1);
    const expiresAt = new Date(Date.now() + this.ctx.config.refreshTtlSeconds * 1000);
    // Conditional on the old hash (and the rotation read), so two concurrent refreshes cannot both win.
    const rows = await em.execute(
      `update auth_sessions set refresh_hash = ?, expires_at = ?, rotated_at = now(), rotation = rotation + 1
        where id = ? and refresh_hash = ? and rotation = ? and revoked_at is null returning id`,
      [hashSecret(refreshToken), expiresAt, s.id, oldHash, rotation],
    );
    if (!rows.length) throw fail('UNAUTHENTICATED', 'refresh token invalid, rotated or revoked');
    return this.tokens(s.user_id, s.id, refreshToken, expiresAt);
  }

  /** Ends the login behind the bearer JWT; every access token of it is refused at once on every node. */
  async logout(bearer: string | undefined) {
    const sid = await this.sidOf(bearer);
    if (!sid) throw fail('VALIDATION', 'logout ends a browser login: call it with the login access token (delete an API key through /me/keys)');
    await this.revoke(sid);
    return { loggedOut: true };
  }

  /** The provider's logout address; with a login access token the login is ended too. */
  async ssoLogout(bearer: string | undefined) {
    const client = this.provider();
    const sid = await this.sidOf(bearer);
    // The hub's login ends even when the provider cannot be reached (then 503).
    if (sid) await this.revoke(sid);
    return { url: await client.logoutUrl(), loggedOut: !!sid };
  }

  private async sidOf(bearer: string | undefined): Promise<string | null> {
    if (!bearer || !looksLikeJwt(bearer)) return null;
    return (await verifyAccessToken(this.ctx.secrets.jwtKey, bearer)).sid;
  }

  private async revoke(sid: string) {
    await this.ctx.em().execute(`update auth_sessions set revoked_at = now() where id = ? and revoked_at is null`, [sid]);
    this.auth.revokeSession(sid);
  }
}
