// A stream outlives the request that authenticated it: each one is watched
// under the credential it was opened with (an API key's hash, a sign-in's
// id) and told when that credential goes — at once on a revocation event,
// and by a re-check of every watched credential in one query each auth-cache
// TTL and after the Bus reconnects (an event can be lost, as the caches'
// entries can; see authenticator.ts).
import type { HubContext } from '../context.js';
import type { Principal } from '../server/http.js';
import { pooled } from '../db/pooled.js';

export type Revocation = { t: 'key'; hash: string } | { t: 'user'; userId: string } | { t: 'sid'; sid: string };

interface Watch {
  credential: string;
  userId: string;
  onRevoked: () => void;
}

/** `k:<key hash>` or `s:<sign-in id>`: what Principal.credential holds. */
export const keyCredential = (hash: string) => `k:${hash}`;
export const signInCredential = (sid: string) => `s:${sid}`;

export class LiveCredentials {
  private watches = new Set<Watch>();
  private byCredential = new Map<string, Set<Watch>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly ctx: HubContext) {}

  /** Calls `onRevoked` once if `p`'s credential is revoked; the returned function stops watching. */
  watch(p: Principal, onRevoked: () => void): () => void {
    if (!p.credential) return () => undefined;
    const w: Watch = { credential: p.credential, userId: p.userId, onRevoked };
    this.watches.add(w);
    let set = this.byCredential.get(w.credential);
    if (!set) this.byCredential.set(w.credential, (set = new Set()));
    set.add(w);
    this.timer ??= setInterval(() => void this.recheck(), this.ctx.config.authCacheTtlMs).unref();
    return () => this.forget(w);
  }

  get size(): number {
    return this.watches.size;
  }

  revoked(ev: Revocation): void {
    if (ev.t === 'user') {
      for (const w of [...this.watches]) if (w.userId === ev.userId) this.fire(w);
      return;
    }
    const set = this.byCredential.get(ev.t === 'key' ? keyCredential(ev.hash) : signInCredential(ev.sid));
    if (set) for (const w of [...set]) this.fire(w);
  }

  /** Ends the watches whose credential no longer opens a request: one query for all of them. */
  async recheck(): Promise<void> {
    if (this.checking || !this.byCredential.size) return;
    this.checking = true;
    try {
      const hashes: string[] = [];
      const sids: string[] = [];
      for (const c of this.byCredential.keys()) (c.startsWith('k:') ? hashes : sids).push(c.slice(2));
      const rows = await pooled<{ c: string }>(
        this.ctx.orm,
        `select 'k:' || hash as c from api_keys where hash = any(?::text[])
         union all select 's:' || id from auth_sessions where id = any(?::text[]) and revoked_at is null and expires_at > now()`,
        [hashes, sids],
      );
      const live = new Set(rows.map((r) => r.c));
      for (const [c, set] of [...this.byCredential]) if (!live.has(c)) for (const w of [...set]) this.fire(w);
    } catch (e) {
      this.ctx.log.warn('could not re-check the credentials of open streams', { err: e });
    } finally {
      this.checking = false;
    }
  }

  private fire(w: Watch): void {
    if (!this.forget(w)) return;
    try {
      w.onRevoked();
    } catch (e) {
      this.ctx.log.warn('a revoked stream did not end cleanly', { err: e });
    }
  }

  private forget(w: Watch): boolean {
    if (!this.watches.delete(w)) return false;
    const set = this.byCredential.get(w.credential)!;
    set.delete(w);
    if (!set.size) this.byCredential.delete(w.credential);
    if (!this.watches.size && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    return true;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
