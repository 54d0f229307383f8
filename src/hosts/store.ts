// The hosts table seen from the hot paths. Credential checks are served from
// an in-process map (kept true by `hosts` Bus invalidations on revoke), and
// what a host reports (hello, engines, last seen) is written in batches, so
// neither connecting nor heartbeating costs a database round trip per frame.
// A revocation can be lost while Redis is unreachable: cached credentials are
// trusted for AUTH_CACHE_TTL_MS only, and every TTL and after each Bus
// reconnect the hosts whose channels this node holds are checked against the
// table (one query), so a host deleted meanwhile loses its channel. Unknown
// credentials are cached as negative for a short while.
import type { HubContext } from '../context.js';
import type { Engine } from '../../host-protocol/frames.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import { ExpiringMap } from '../bus/expiring.js';
import { hashSecret } from './credentials.js';
import { Coalescer } from '../coalesce.js';
import { pooled, type BindValue } from '../db/pooled.js';

export interface HostIdentity {
  hostId: string;
  userId: string;
  /**
   * The hello the host row holds (helloPrint), as read by the database lookup that served this
   * credential check; absent when the check was served from memory. A hello equal to it is not written.
   */
  stored?: string;
}

export interface HelloData {
  name: string;
  cliVersion: string;
  protocolVersion: number;
  engines: Engine[];
  capacity: number;
}

/** A hello's fields as one comparable string (engines field by field: jsonb does not keep key order). */
export function helloPrint(h: HelloData): string {
  return JSON.stringify([h.name, h.cliVersion, h.protocolVersion, h.capacity, h.engines.map((e) => [e.id, e.displayName, e.version ?? null])]);
}

type StoreEvent = { t: 'revoked'; hash: string; hostId: string };

const FLUSH_MS = 1_000;
const CACHE_MAX = 200_000;
/** How long a credential with no host row is answered "unknown" from memory. */
const NEGATIVE_TTL_MS = 60_000;
const CHECK_CHUNK = 1000;

export class HostStore {
  private readonly ttl = () => this.ctx.config.authCacheTtlMs;
  private creds = new ExpiringMap<string, HostIdentity>(this.ttl, CACHE_MAX);
  private bad = new ExpiringMap<string, true>(() => NEGATIVE_TTL_MS, CACHE_MAX);
  /** Credential hashes looked up in the database so far (a seam for tests and metrics). */
  dbLookups = 0;
  /** Lookup queries so far (a reconnect storm must cost few). */
  lookupQueries = 0;
  private checkTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private hellos = new Map<string, HelloData>();
  private seen = new Map<string, number>();
  /** Engine lists reported outside a hello, the latest per host, written by the periodic flush. */
  private engines = new Map<string, Engine[]>();
  private timer: NodeJS.Timeout;
  private unsubs: Array<() => void>;
  private flushing: Promise<void> = Promise.resolve();
  private revoked = new Set<string>();
  /** Called on every node when a host's credential is revoked (the channels close its sockets). */
  onRevoked?: (hostId: string) => void;
  /** The hosts whose channels this node holds (set by the channels), checked against the table. */
  liveHosts?: () => string[];

  constructor(private readonly ctx: HubContext) {
    this.unsubs = [
      subscribeObj<StoreEvent>(ctx.bus, 'hosts', (ev) => {
        if (ev.t === 'revoked') this.forget(ev.hash, ev.hostId);
      }),
      ctx.bus.onReconnect(() => {
        this.creds.clear();
        void this.checkLive();
      }),
    ];
    this.timer = setInterval(() => {
      void this.flush();
      // A connect storm's credentials go once their TTL has passed (each channel keeps its own identity).
      this.creds.prune();
      this.bad.prune();
    }, FLUSH_MS);
    this.timer.unref();
    this.scheduleCheck();
  }

  private forget(hash: string, hostId: string): void {
    this.creds.delete(hash);
    // A lookup already in flight may still return the deleted row: never cache or accept it.
    if (this.revoked.size >= 10_000) this.revoked.clear();
    this.revoked.add(hash);
    this.onRevoked?.(hostId);
  }

  /** Re-armed each time, so a changed TTL applies from the next check. */
  private scheduleCheck(): void {
    if (this.closed) return;
    this.checkTimer = setTimeout(() => void this.checkLive().finally(() => this.scheduleCheck()), this.ttl());
    this.checkTimer.unref();
  }

  /** Closes the channels held here whose host row is gone (deleted while an invalidation could not arrive). */
  async checkLive(): Promise<void> {
    const ids = [...new Set(this.liveHosts?.() ?? [])];
    for (let i = 0; i < ids.length; i += CHECK_CHUNK) {
      const part = ids.slice(i, i + CHECK_CHUNK);
      try {
        const rows = await pooled<{ id: string }>(this.ctx.orm, `select id from hosts where id = any(?::text[])`, [part]);
        const present = new Set(rows.map((r) => r.id as string));
        for (const id of part) if (!present.has(id)) this.onRevoked?.(id);
      } catch (e) {
        this.ctx.log.warn('could not check live hosts', { err: e });
        return;
      }
    }
  }

  /** The host a credential belongs to, or undefined (forged or revoked). */
  identify(credential: string): Promise<HostIdentity | undefined> {
    const hash = hashSecret(credential);
    const hit = this.creds.get(hash);
    if (hit) return Promise.resolve(hit);
    if (this.bad.get(hash)) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const waiting = this.lookups.get(hash);
      if (waiting) return void waiting.push({ resolve, reject });
      this.lookups.set(hash, [{ resolve, reject }]);
      this.lookupQueue.add(hash);
    });
  }

  private lookups = new Map<string, Array<{ resolve(v: HostIdentity | undefined): void; reject(e: unknown): void }>>();
  /** One lookup query in flight; the credentials that arrive meanwhile go in the next (a reconnect storm is a few queries, not thousands). */
  private lookupQueue = new Coalescer<string>((hashes) => this.lookupBatch(hashes), 1000);

  /** One query for the credentials that arrived since the last one. */
  private async lookupBatch(hashes: string[]): Promise<void> {
    const batch = hashes.map((h) => [h, this.lookups.get(h)!] as const);
    for (const h of hashes) this.lookups.delete(h);
    this.dbLookups += batch.length;
    this.lookupQueries++;
    try {
      const rows = await pooled(this.ctx.orm,
        `select id, user_id, credential_hash, name, cli_version, protocol_version, engines, capacity from hosts where credential_hash = any(?::text[])`,
        [batch.map(([h]) => h)],
      );
      const found = new Map<string, { id: HostIdentity; stored?: string }>(rows.filter((r: any) => !this.revoked.has(r.credential_hash)).map((r: any) => [
        r.credential_hash,
        { id: { hostId: r.id, userId: r.user_id }, stored: storedPrint(r) },
      ]));
      for (const [h, f] of found) this.creds.set(h, f.id);
      for (const [h] of batch) if (!found.has(h)) this.bad.set(h, true);
      // Each waiter its own object: the row's hello is known for this check only, never from the cache.
      for (const [h, waiters] of batch) {
        const f = found.get(h);
        for (const w of waiters) w.resolve(f && { ...f.id, ...(f.stored === undefined ? {} : { stored: f.stored }) });
      }
    } catch (e) {
      for (const [, waiters] of batch) for (const w of waiters) w.reject(e);
    }
  }

  /** Call after the host row is deleted: this node forgets the credential at once, then every other node. */
  revoke(credentialHash: string, hostId: string): void {
    this.forget(credentialHash, hostId);
    publishObj(this.ctx.bus, 'hosts', { t: 'revoked', hash: credentialHash, hostId } satisfies StoreEvent);
  }

  /**
   * Written at the end of this tick, together with every other hello of the tick, so readers of the row (agent engine checks) see it at once.
   * Not written when the row holds it already (`stored`, read at this connect's credential check): a reconnect storm of
   * unchanged hosts costs no row writes (their last-seen time is written at the disconnect and by the periodic persist).
   */
  recordHello(hostId: string, hello: HelloData, stored?: string): void {
    if (stored !== undefined && stored === helloPrint(hello) && !this.hellos.has(hostId)) return;
    this.hellos.set(hostId, hello);
    this.engines.delete(hostId); // the hello carries the latest list
    this.seen.set(hostId, Date.now());
    this.soon();
  }

  recordEngines(hostId: string, engines: Engine[]): void {
    const h = this.hellos.get(hostId);
    if (h) h.engines = engines;
    // With the next periodic flush (FLUSH_MS), the latest list only: one statement per frame was a hostile
    // host's way to write thousands of rows a second ahead of everyone's accepts and run ends.
    else this.engines.set(hostId, engines);
  }

  private scheduled = false;
  private soon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  touch(hostId: string, at = Date.now()): void {
    this.seen.set(hostId, at);
  }

  touchMany(hostIds: Iterable<string>, at = Date.now()): void {
    for (const id of hostIds) this.seen.set(id, at);
  }

  /** Writes what is pending; one statement per kind, whatever the number of hosts. */
  flush(): Promise<void> {
    // Never rejects: callers fire and forget (`void this.flush()`), and the next flush chains on it.
    this.flushing = this.flushing.then(() => this.flushNow()).catch((e) => this.ctx.log.error('could not record host state', { err: e }));
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    // Each column as one array parameter (unnest): a short, constant statement whose cost grows with its
    // rows only. A VALUES list of N rows made N × columns bind parameters, and cost PostgreSQL about twice
    // the CPU and the hub about twice the JavaScript per row (bench/RESULTS.md, twenty-third session).
    if (this.hellos.size) {
      const batch = [...this.hellos];
      this.hellos.clear();
      for (let i = 0; i < batch.length; i += 2000) {
        const part = batch.slice(i, i + 2000);
        // The hello's last-seen time goes in the same row update (one row version per connect, not two).
        const seen = part.map(([id]) => this.seen.get(id));
        for (const [id] of part) this.seen.delete(id);
        await this.write(
          `update hosts h set name = v.name, cli_version = v.cli, protocol_version = v.pv, engines = v.engines, capacity = v.cap, updated_at = now(),
                  last_seen_at = coalesce(v.t, h.last_seen_at)
           from unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::jsonb[], ?::int[], ?::timestamptz[]) as v(id, name, cli, pv, engines, cap, t)
           where h.id = v.id`,
          [part.map(([id]) => id), part.map(([, h]) => h.name), part.map(([, h]) => h.cliVersion), part.map(([, h]) => h.protocolVersion),
            part.map(([, h]) => JSON.stringify(h.engines)), part.map(([, h]) => h.capacity), seen.map((t) => (t === undefined ? null : new Date(t).toISOString()))],
        );
      }
    }
    if (this.engines.size) {
      const batch = [...this.engines];
      this.engines.clear();
      for (let i = 0; i < batch.length; i += 2000) {
        const part = batch.slice(i, i + 2000);
        await this.write(
          `update hosts h set engines = v.engines, updated_at = now() from unnest(?::text[], ?::jsonb[]) as v(id, engines) where h.id = v.id`,
          [part.map(([id]) => id), part.map(([, e]) => JSON.stringify(e))],
        );
      }
    }
    if (this.seen.size) {
      const batch = [...this.seen];
      this.seen.clear();
      for (let i = 0; i < batch.length; i += 5000) {
        const part = batch.slice(i, i + 5000);
        await this.write(`update hosts h set last_seen_at = v.t from unnest(?::text[], ?::timestamptz[]) as v(id, t) where h.id = v.id`,
          [part.map(([id]) => id), part.map(([, t]) => new Date(t).toISOString())]);
      }
    }
  }

  private async write(sql: string, params: BindValue[]): Promise<void> {
    try {
      await pooled(this.ctx.orm, sql, params);
    } catch (e) {
      this.ctx.log.warn('could not record host state', { err: e });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    clearTimeout(this.checkTimer);
    for (const u of this.unsubs) u();
    await this.flush();
  }
}

/** The hello a host row holds, or undefined when the row has never had one. */
function storedPrint(r: { name: string | null; cli_version: string | null; protocol_version: number | null; engines: unknown; capacity: number | null }): string | undefined {
  if (r.cli_version === null || r.protocol_version === null || r.capacity === null) return undefined;
  const engines = typeof r.engines === 'string' ? JSON.parse(r.engines) : r.engines;
  if (!Array.isArray(engines)) return undefined;
  return helloPrint({ name: r.name ?? '', cliVersion: r.cli_version, protocolVersion: Number(r.protocol_version), capacity: Number(r.capacity), engines });
}
