// Turns a bearer token into a Principal on the hot path without a database
// round trip once warm: API keys are looked up by hash in an in-process map,
// JWT users in another, and both are kept true by invalidations published on
// the Bus (topic `auth`), so a refreshed or deleted key is refused at once on
// every node. `lastUsedAt` is written in batches, not per request.
// An invalidation can be lost while Redis is unreachable, so every entry is
// trusted for AUTH_CACHE_TTL_MS only and all of them go when the Bus
// reconnects; the node that revokes applies it to itself at once, not on its
// echo. Unknown API keys are cached as negative for a short while.
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { fail } from '../errors.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import { ExpiringMap } from '../bus/expiring.js';
import { API_KEY_PREFIX, hashSecret } from './keys.js';
import { looksLikeJwt, verifyAccessToken } from './tokens.js';
import { pooled } from '../db/pooled.js';
import { LiveCredentials, keyCredential, signInCredential, type Revocation } from './live-credentials.js';


const TOUCH_FLUSH_MS = 10_000;
/** Keys per statement of that write (each a few milliseconds of the event loop). */
const TOUCH_CHUNK = 5_000;
const CACHE_MAX = 100_000;
/** How long a hash with no key row is answered 401 from memory. */
const NEGATIVE_TTL_MS = 60_000;

export class Authenticator {
  private readonly ttl = () => this.ctx.config.authCacheTtlMs;
  private keys = new ExpiringMap<string, Principal>(this.ttl, CACHE_MAX);
  private badKeys = new ExpiringMap<string, true>(() => NEGATIVE_TTL_MS, CACHE_MAX);
  private users = new ExpiringMap<string, { name: string; role: Principal['role'] }>(this.ttl, CACHE_MAX);
  private sessions = new ExpiringMap<string, boolean>(this.ttl, CACHE_MAX); // sid → live
  /** Bumped by every invalidation: a lookup that straddles one does not cache what it read. */
  private epoch = 0;
  private touched = new Map<string, number>();
  /** Open streams, each ended when the credential it was opened with is revoked. */
  private readonly live: LiveCredentials;
  private timer: NodeJS.Timeout;
  private unsubs: Array<() => void>;
  /** Database lookups made so far (a seam for tests and metrics). */
  dbLookups = 0;

  constructor(private readonly ctx: HubContext) {
    this.live = new LiveCredentials(ctx);
    this.unsubs = [subscribeObj<Revocation>(ctx.bus, 'auth', (ev) => this.onEvent(ev)), ctx.bus.onReconnect(() => this.forgetAll())];
    this.timer = setInterval(() => {
      void this.flushTouches();
      for (const m of [this.keys, this.badKeys, this.users, this.sessions]) m.prune(); // expired entries go, not only when looked up
    }, TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  /**
   * A cached API key is answered synchronously (no promise on the hot path); anything else
   * (a cold key, a JWT) as a promise. A refusal may be thrown synchronously.
   */
  authenticate(token: string): Principal | Promise<Principal> {
    if (token.startsWith(API_KEY_PREFIX)) return this.byKey(token);
    if (looksLikeJwt(token)) return this.byJwt(token);
    throw fail('UNAUTHENTICATED');
  }

  private byKey(token: string): Principal | Promise<Principal> {
    const hash = hashSecret(token);
    const p = this.keys.get(hash);
    if (!p) return this.lookupKey(hash);
    this.touch(p);
    return p;
  }

  private async lookupKey(hash: string): Promise<Principal> {
    if (this.badKeys.get(hash)) throw fail('UNAUTHENTICATED', 'invalid API key');
    const epoch = this.epoch;
    this.dbLookups++;
    const rows = await this.ctx.em().getConnection().execute(
      `select k.id as key_id, u.id as user_id, u.name, u.role from api_keys k join users u on u.id = k.user_id where k.hash = ?`,
      [hash],
    );
    if (!rows.length) {
      this.badKeys.set(hash, true);
      throw fail('UNAUTHENTICATED', 'invalid API key');
    }
    const r = rows[0];
    const p: Principal = { userId: r.user_id, name: r.name, role: r.role, via: 'key', keyId: r.key_id, credential: keyCredential(hash) };
    if (epoch === this.epoch) this.keys.set(hash, p);
    this.touch(p);
    return p;
  }

  /** Remembered for the next batched `last_used_at` write: the time in ms, a Date only when flushed. */
  private touch(p: Principal): void {
    this.touched.set(p.keyId!, Date.now());
  }

  private async byJwt(token: string): Promise<Principal> {
    const claims = await verifyAccessToken(this.ctx.secrets.jwtKey, token);
    let live = this.sessions.get(claims.sid);
    let user = this.users.get(claims.sub);
    if (live === undefined || !user) {
      const epoch = this.epoch;
      this.dbLookups++;
      const rows = await this.ctx.em().getConnection().execute(
        `select s.revoked_at, u.name, u.role from auth_sessions s join users u on u.id = s.user_id where s.id = ? and u.id = ?`,
        [claims.sid, claims.sub],
      );
      live = rows.length > 0 && rows[0].revoked_at === null;
      if (rows.length) user = { name: rows[0].name, role: rows[0].role };
      if (epoch === this.epoch) {
        this.sessions.set(claims.sid, live);
        if (user) this.users.set(claims.sub, user);
      }
    }
    if (!live || !user) throw fail('UNAUTHENTICATED', 'session ended');
    return { userId: claims.sub, name: user.name, role: user.role, via: 'jwt', credential: signInCredential(claims.sid) };
  }

  /** Calls `onRevoked` once when `p`'s credential is revoked (a stream it opened must end); returns the unwatch. */
  watch(p: Principal, onRevoked: () => void): () => void {
    return this.live.watch(p, onRevoked);
  }

  /** Call after the change has committed: applied here at once, then on every other node. */
  revokeKeyHash(hash: string): void {
    this.announce({ t: 'key', hash });
  }
  revokeUser(userId: string): void {
    this.announce({ t: 'user', userId });
  }
  revokeSession(sid: string): void {
    this.announce({ t: 'sid', sid });
  }

  private announce(ev: Revocation): void {
    this.onEvent(ev);
    publishObj(this.ctx.bus, 'auth', ev);
  }

  private onEvent(ev: Revocation): void {
    this.epoch++;
    if (ev.t === 'key') this.keys.delete(ev.hash);
    else if (ev.t === 'sid') this.sessions.set(ev.sid, false);
    else {
      this.users.delete(ev.userId);
      this.keys.deleteWhere((p) => p.userId === ev.userId);
    }
    this.live.revoked(ev);
  }

  /** Invalidations may have been lost (the Bus reconnected): read everything again. */
  private forgetAll(): void {
    this.epoch++;
    this.keys.clear();
    this.users.clear();
    this.sessions.clear();
    void this.live.recheck();
  }

  private async flushTouches(): Promise<void> {
    if (!this.touched.size) return;
    const batch = [...this.touched];
    this.touched.clear();
    try {
      // One array per column, bound, in chunks: a VALUES list quoted into the text by `execute`
      // stalled the event loop for hundreds of milliseconds at tens of thousands of keys.
      for (let i = 0; i < batch.length; i += TOUCH_CHUNK) {
        const part = batch.slice(i, i + TOUCH_CHUNK);
        await pooled(this.ctx.orm,
          `update api_keys k set last_used_at = to_timestamp(v.ms / 1000.0) from unnest(?::text[], ?::bigint[]) as v(id, ms) where k.id = v.id`,
          [part.map(([id]) => id), part.map(([, t]) => t)]);
      }
    } catch (e) {
      this.ctx.log.warn('could not record key use', { err: e });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.live.close();
    for (const u of this.unsubs) u();
    await this.flushTouches();
  }
}
