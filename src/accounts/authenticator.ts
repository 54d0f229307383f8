// Turns a bearer token into a Principal on the hot path without a database
// round trip once warm: API keys are looked up by hash in an in-process map,
// JWT users in another, and both are kept true by invalidations published on
// the Bus (topic `auth`), so a refreshed or deleted key is refused at once on
// every node. `lastUsedAt` is written in batches, not per request.
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { fail } from '../errors.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import { API_KEY_PREFIX, hashSecret } from './keys.js';
import { looksLikeJwt, verifyAccessToken } from './tokens.js';

type AuthEvent = { t: 'key'; hash: string } | { t: 'user'; userId: string } | { t: 'sid'; sid: string };

const TOUCH_FLUSH_MS = 10_000;
const CACHE_MAX = 100_000;

export class Authenticator {
  private keys = new Map<string, Principal>();
  private users = new Map<string, { name: string; role: Principal['role'] }>();
  private sessions = new Map<string, boolean>(); // sid → live
  private touched = new Map<string, Date>();
  private timer: NodeJS.Timeout;
  private unsub: () => void;

  constructor(private readonly ctx: HubContext) {
    this.unsub = subscribeObj<AuthEvent>(ctx.bus, 'auth', (ev) => this.onEvent(ev));
    this.timer = setInterval(() => void this.flushTouches(), TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  async authenticate(token: string): Promise<Principal> {
    if (token.startsWith(API_KEY_PREFIX)) return this.byKey(token);
    if (looksLikeJwt(token)) return this.byJwt(token);
    throw fail('UNAUTHENTICATED');
  }

  private async byKey(token: string): Promise<Principal> {
    const hash = hashSecret(token);
    let p = this.keys.get(hash);
    if (!p) {
      const rows = await this.ctx.em().getConnection().execute(
        `select k.id as key_id, u.id as user_id, u.name, u.role from api_keys k join users u on u.id = k.user_id where k.hash = ?`,
        [hash],
      );
      if (!rows.length) throw fail('UNAUTHENTICATED', 'invalid API key');
      const r = rows[0];
      p = { userId: r.user_id, name: r.name, role: r.role, via: 'key', keyId: r.key_id };
      if (this.keys.size >= CACHE_MAX) this.keys.clear();
      this.keys.set(hash, p);
    }
    this.touched.set(p.keyId!, new Date());
    return p;
  }

  private async byJwt(token: string): Promise<Principal> {
    const claims = await verifyAccessToken(this.ctx.secrets.jwtKey, token);
    let live = this.sessions.get(claims.sid);
    let user = this.users.get(claims.sub);
    if (live === undefined || !user) {
      const rows = await this.ctx.em().getConnection().execute(
        `select s.revoked_at, u.name, u.role from auth_sessions s join users u on u.id = s.user_id where s.id = ? and u.id = ?`,
        [claims.sid, claims.sub],
      );
      live = rows.length > 0 && rows[0].revoked_at === null;
      if (this.sessions.size >= CACHE_MAX) this.sessions.clear();
      this.sessions.set(claims.sid, live);
      if (rows.length) this.users.set(claims.sub, (user = { name: rows[0].name, role: rows[0].role }));
    }
    if (!live || !user) throw fail('UNAUTHENTICATED', 'session ended');
    return { userId: claims.sub, name: user.name, role: user.role, via: 'jwt' };
  }

  /** Call after the change has committed. */
  revokeKeyHash(hash: string): void {
    publishObj(this.ctx.bus, 'auth', { t: 'key', hash } satisfies AuthEvent);
  }
  revokeUser(userId: string): void {
    publishObj(this.ctx.bus, 'auth', { t: 'user', userId } satisfies AuthEvent);
  }
  revokeSession(sid: string): void {
    publishObj(this.ctx.bus, 'auth', { t: 'sid', sid } satisfies AuthEvent);
  }

  private onEvent(ev: AuthEvent): void {
    if (ev.t === 'key') this.keys.delete(ev.hash);
    else if (ev.t === 'sid') this.sessions.set(ev.sid, false);
    else {
      this.users.delete(ev.userId);
      for (const [h, p] of this.keys) if (p.userId === ev.userId) this.keys.delete(h);
    }
  }

  private async flushTouches(): Promise<void> {
    if (!this.touched.size) return;
    const batch = [...this.touched];
    this.touched.clear();
    const values = batch.map(() => '(?, ?::timestamptz)').join(',');
    try {
      await this.ctx.em().getConnection().execute(
        `update api_keys k set last_used_at = v.t from (values ${values}) as v(id, t) where k.id = v.id`,
        batch.flatMap(([id, t]) => [id, t.toISOString()]),
      );
    } catch (e) {
      this.ctx.log.warn('could not record key use', { err: e });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.unsub();
    await this.flushTouches();
  }
}
