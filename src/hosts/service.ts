// The hosts domain: pairing, the account's view of its hosts, and the
// requests users make of a host (directories, engine refresh). It knows the
// channel only through HostChannels (the HostGateway) and never sees a socket.
import { Compile } from 'typebox/compile';
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import { enforceQuota } from '../billing/quotas.js';
import { newId } from '../ids.js';
import { PAIR_KEYS_PER_ACCOUNT, refuseOverCap } from '../account-caps.js';
import type { Engine } from '../../host-protocol/frames.js';
import { DirsResult, EnginesResult } from '../../host-protocol/frames.js';
import type { HostChannels } from './gateway-impl.js';
import type { Presence, PresenceEntry } from './presence.js';
import type { HostStore } from './store.js';
import { PAIR_KEY_TTL_MS, generateHostCredential, generatePairKey, hashSecret } from './credentials.js';

export interface HostView {
  id: string;
  name: string;
  remark: string | null;
  status: 'online' | 'busy' | 'offline';
  engines: Engine[];
  capacity: number;
  running: number;
  lastSeenAt: number | null;
  cliVersion: string | null;
  createdAt: number;
  modelConfig: unknown;
  [extra: string]: unknown;
}

/** Lets another domain add fields to host views (model-configs fills `modelConfig`). */
export type HostExtras = (userId: string, hosts: HostView[]) => Promise<void> | void;

export interface HeartbeatBody {
  capacity?: number;
  running?: number;
  engines?: Engine[];
}

const checkDirs = Compile(DirsResult);
const checkEngines = Compile(EnginesResult);

interface Row {
  id: string;
  user_id: string;
  name: string;
  remark: string | null;
  cli_version: string | null;
  engines: Engine[];
  capacity: number;
  last_seen_at: Date | string | null;
  created_at: Date | string;
}
const COLS = `id, user_id, name, remark, cli_version, engines, capacity, last_seen_at, created_at`;
const ms = (d: Date | string | null) => (d === null ? null : new Date(d).getTime());

/** Hosts whose rows are gone (deleted, or with their account): what other domains kept about them goes too. */
export type HostsRemoved = (hostIds: string[]) => Promise<void> | void;

export class HostService {
  readonly hostExtras: HostExtras[] = [];
  private readonly removedHandlers: HostsRemoved[] = [];

  constructor(
    private readonly ctx: HubContext,
    private readonly channels: HostChannels,
    private readonly presence: Presence,
    private readonly store: HostStore,
  ) {}

  private sql<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.ctx.em().getConnection().execute(sql, params) as Promise<T[]>;
  }

  // ---------- pairing ----------

  async createPairKey(userId: string): Promise<{ pairKey: string; expiresAt: number }> {
    await enforceQuota(this.ctx, userId, 'hosts'); // early, so the owner learns it before running the CLI
    // Spent and expired keys are useless: they go here (no job), and the live ones are counted.
    const [held] = await this.sql<{ n: number }>(
      `with gone as (delete from pair_keys where user_id = ? and (used_at is not null or expires_at <= now()))
       select count(*)::int as n from pair_keys where user_id = ? and used_at is null and expires_at > now()`, [userId, userId]);
    refuseOverCap(held.n, PAIR_KEYS_PER_ACCOUNT, 'live pair keys', 'use one, or let them expire (10 minutes)');
    const pairKey = generatePairKey();
    const expiresAt = Date.now() + PAIR_KEY_TTL_MS;
    await this.sql(`insert into pair_keys (hash, user_id, expires_at) values (?, ?, ?)`, [hashSecret(pairKey), userId, new Date(expiresAt).toISOString()]);
    return { pairKey, expiresAt };
  }

  /** Exchanges a pair key, once, for a new host and its credential. */
  async pair(pairKey: string, name: string): Promise<{ hostId: string; credential: string }> {
    const [key] = await this.sql(`select user_id from pair_keys where hash = ? and used_at is null and expires_at > now()`, [hashSecret(pairKey)]);
    if (key) await enforceQuota(this.ctx, key.user_id, 'hosts'); // again: several keys may have been made
    const credential = generateHostCredential();
    const hostId = newId('hst');
    // One statement: the key is spent and the host created together, or neither.
    const rows = await this.sql(
      `with k as (update pair_keys set used_at = now() where hash = ? and used_at is null and expires_at > now() returning user_id)
       insert into hosts (id, user_id, name, credential_hash, engines, capacity) select ?, user_id, ?, ?, '[]'::jsonb, 1 from k returning id`,
      [hashSecret(pairKey), hostId, name, hashSecret(credential)],
    );
    if (!rows.length) throw fail('UNAUTHENTICATED', 'pair key invalid, already used or expired');
    return { hostId, credential };
  }

  // ---------- reads ----------

  async list(userId: string): Promise<{ items: HostView[]; total: number }> {
    const rows = await this.sql<Row>(`select ${COLS} from hosts where user_id = ? order by created_at desc, id`, [userId]);
    const items = await this.views(userId, rows);
    return { items, total: items.length };
  }

  async get(userId: string, hostId: string): Promise<HostView> {
    return (await this.views(userId, [await this.row(userId, hostId)]))[0];
  }

  /**
   * Live engines while a channel is up, else the last reported ones (the row learns a hello's engines in a
   * batched write that may land after the hub has answered the host; presence has them before). Presence
   * unreadable: the row's.
   */
  async engines(userId: string, hostId: string): Promise<Engine[]> {
    const [r, live] = await Promise.all([this.row(userId, hostId), this.presence.get(hostId).catch(() => undefined)]);
    return live?.engines ?? r.engines;
  }

  /** `GET /agents/available-hosts`: the account's online or busy hosts, shaped as the spec says. */
  async available(userId: string): Promise<Array<{ id: string; name: string; status: 'online' | 'busy'; engines: Array<{ id: string; displayName: string }> }>> {
    const rows = await this.sql<{ id: string; name: string; remark: string | null }>(`select id, name, remark from hosts where user_id = ? order by created_at desc, id`, [userId]);
    const live = await this.presence.getMany(rows.map((r) => r.id));
    const out = [];
    for (const r of rows) {
      const p = live.get(r.id);
      if (!p) continue;
      out.push({ id: r.id, name: r.remark || r.name, status: statusOf(p) as 'online' | 'busy', engines: p.engines.map((e) => ({ id: e.id, displayName: e.displayName })) });
    }
    return out;
  }

  // ---------- changes ----------

  async remove(userId: string, hostId: string): Promise<{ deleted: true }> {
    const rows = await this.sql<{ credential_hash: string }>(`delete from hosts where id = ? and user_id = ? returning credential_hash`, [hostId, userId]);
    if (!rows.length) throw fail('NOT_FOUND', 'host not found');
    // After commit: every node forgets the credential and the holder closes the channel.
    this.store.revoke(rows[0].credential_hash, hostId);
    await this.presence.remove(hostId, null);
    await this.tellRemoved([hostId]); // before the answer: the owner's next read sees its agents unbound
    return { deleted: true };
  }

  /** Hosts whose rows are already gone (their account was deleted): forget their credentials and close their channels everywhere. */
  removed(hosts: Array<{ id: string; credentialHash: string }>): void {
    for (const h of hosts) {
      this.store.revoke(h.credentialHash, h.id);
      void this.presence.remove(h.id, null);
    }
    void this.tellRemoved(hosts.map((h) => h.id));
  }

  /** Called after a host's row is deleted (its agents unbound by the database's cascade). */
  onRemoved(handler: HostsRemoved): void {
    this.removedHandlers.push(handler);
  }

  private async tellRemoved(hostIds: string[]): Promise<void> {
    if (!hostIds.length) return;
    for (const h of this.removedHandlers) {
      try {
        await h(hostIds);
      } catch (e) {
        this.ctx.log.warn('a removed host\'s clean-up failed', { hostIds: hostIds.slice(0, 10), err: e });
      }
    }
  }

  async setRemark(userId: string, hostId: string, remark: string | null): Promise<HostView> {
    const rows = await this.sql(`update hosts set remark = ?, updated_at = now() where id = ? and user_id = ? returning id`, [remark || null, hostId, userId]);
    if (!rows.length) throw fail('NOT_FOUND', 'host not found');
    return this.get(userId, hostId);
  }

  // ---------- requests to the host ----------

  async directories(userId: string, hostId: string, path: string): Promise<DirsResult> {
    await this.row(userId, hostId);
    const data = await this.channels.request(hostId, { t: 'dirs.list', path: normalizeRelative(path) });
    if (!checkDirs.Check(data)) throw fail('HOST_BAD_REPLY');
    return data;
  }

  async refresh(userId: string, hostId: string): Promise<HostView> {
    await this.row(userId, hostId);
    const data = await this.channels.request(hostId, { t: 'engines.refresh' });
    if (!checkEngines.Check(data)) throw fail('HOST_BAD_REPLY');
    this.channels.updateEngines(hostId, data.engines);
    return this.get(userId, hostId);
  }

  // ---------- HTTP heartbeat (hosts that poll instead of holding a channel) ----------

  async heartbeat(credential: string | undefined, body: HeartbeatBody): Promise<{ hostId: string; status: string; heartbeatMs: number }> {
    const id = credential ? await this.store.identify(credential) : undefined;
    if (!id) throw fail('UNAUTHENTICATED', 'host credential missing or invalid');
    const now = Date.now();
    const ttl = this.channels.timing.heartbeatTimeoutMs;
    const cur = await this.presence.get(id.hostId);
    // A host whose channel a live node holds is that node's to keep present (its liveness key); a heartbeat over HTTP changes none of it.
    if (!cur || cur.nodeId === null) {
      let capacity = body.capacity ?? cur?.capacity;
      let engines = body.engines ?? cur?.engines;
      if (capacity === undefined || engines === undefined) {
        const [r] = await this.sql<Row>(`select capacity, engines from hosts where id = ?`, [id.hostId]);
        capacity ??= r?.capacity ?? 1;
        engines ??= r?.engines ?? [];
      }
      // A hello may have written a channel's entry since the read: the write leaves such an entry alone.
      const wrote = await this.presence.setPolled(id.hostId, { nodeId: null, running: body.running ?? cur?.running ?? 0, capacity, engines, lastSeenAt: now }, ttl);
      if (wrote && body.engines) this.store.recordEngines(id.hostId, body.engines);
    }
    this.store.touch(id.hostId, now);
    const p = await this.presence.get(id.hostId);
    return { hostId: id.hostId, status: p ? statusOf(p) : 'offline', heartbeatMs: this.channels.heartbeatMs };
  }

  // ---------- helpers ----------

  private async row(userId: string, hostId: string): Promise<Row> {
    const [r] = await this.sql<Row>(`select ${COLS} from hosts where id = ? and user_id = ?`, [hostId, userId]);
    if (!r) throw fail('NOT_FOUND', 'host not found');
    return r;
  }

  private async views(userId: string, rows: Row[]): Promise<HostView[]> {
    const live = await this.presence.getMany(rows.map((r) => r.id));
    const out = rows.map((r): HostView => {
      const p = live.get(r.id);
      return {
        id: r.id,
        name: r.name,
        remark: r.remark,
        status: p ? statusOf(p) : 'offline',
        engines: p ? p.engines : r.engines,
        capacity: p ? p.capacity : r.capacity,
        running: p ? p.running : 0,
        lastSeenAt: p ? p.lastSeenAt : ms(r.last_seen_at),
        cliVersion: r.cli_version,
        createdAt: ms(r.created_at)!,
        modelConfig: null,
      };
    });
    for (const extra of this.hostExtras) await extra(userId, out);
    return out;
  }
}

export function statusOf(p: Pick<PresenceEntry, 'running' | 'capacity'>): 'online' | 'busy' {
  return p.running >= p.capacity ? 'busy' : 'online';
}

/** A path relative to the work root: no absolute path, no `..`, no NUL. '' is the root itself. */
export function normalizeRelative(path: string): string {
  if (path.includes('\0')) throw fail('VALIDATION', 'query/path: must not contain NUL');
  const p = path.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) throw fail('VALIDATION', 'query/path: must be relative to the work root');
  const segs = p.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) throw fail('VALIDATION', "query/path: must not contain '..'");
  return segs.join('/');
}
