// Which configuration each host uses, and getting it there. The database row
// is the truth (status idle | pending | syncing | failed); deliveries to one
// host are serialized on this node, and every delivery reads the latest
// version of the configuration, so several edits send only the last one.
// Every write to a host holds its settings lease (hosts/settings-lease.ts):
// no run starts there meanwhile, and none may be running when it begins.
import type { HubContext } from '../context.js';
import { pooled } from '../db/pooled.js';
import { fail, HubError } from '../errors.js';
import type { HostGateway } from '../hosts/gateway.js';
import { isUnanswered } from '../hosts/requests.js';
import { publishObj, subscribeObj } from '../bus/bus.js';
import { ExpiringMap } from '../bus/expiring.js';
import { takeSettingsLease, renewSettingsLease, releaseSettingsLease, type SettingsLease } from '../hosts/settings-lease.js';
import { HostModelBinding, ModelConfig, type BindingStatus } from './entities.js';
import type { ModelConfigService } from './service.js';
import { Coalescer } from '../coalesce.js';

export interface BindingView {
  configId: string;
  name: string;
  status: BindingStatus;
  lastError: string | null;
}

const ENGINE = 'claude-code';
/** Bus topic: these hosts may owe a delivery now (every node forgets it knew otherwise). */
const OWED_TOPIC = 'model-bindings';
const CLEAN_MAX = 100_000;
const ERROR_MAX = 1000;
/** Errors that mean "the host did not take the command", as opposed to "it tried and failed". */
const NOT_TAKEN = new Set(['HOST_OFFLINE', 'HOST_TOO_OLD', 'HOST_TIMEOUT']);
/**
 * After a failed delivery, an idle host is sent what it owes again only after this delay, doubled per
 * failure up to the max: each delivery holds the host's settings lease (no run starts), up to the
 * command's deadline when the host is silent. A hello, an apply or an edit still sends at once.
 */
export const OWED_RETRY_MIN_MS = 30_000;
export const OWED_RETRY_MAX_MS = 30 * 60_000;
const UNANSWERED_ERROR = 'the host did not answer the last settings command and may have applied it; the hub sends its configuration again when the host is next online or idle';

export class ModelBindings {
  private chains = new Map<string, Promise<unknown>>();
  /** Hosts whose last delivery failed: when an idle may try again, and the delay after the next failure. */
  private retry = new Map<string, { at: number; delayMs: number }>();
  /**
   * Hosts known to owe nothing, so that "running dropped to zero" (every run end)
   * costs no database read. Kept true by OWED_TOPIC messages from any node, and trusted
   * for AUTH_CACHE_TTL_MS only and dropped on a Bus reconnect: a notice lost kept an
   * edited configuration (a rotated key) from its host for as long as its channel stayed up.
   */
  private clean = new ExpiringMap<string, true>(() => this.ctx.config.authCacheTtlMs, CLEAN_MAX);
  private unsubReconnect: () => void = () => {};
  private unsub: () => void = () => {};
  /** Counts OWED_TOPIC messages: a read that raced with one must not mark the host clean. */
  private owedSeq = 0;
  /** A settings write ended: messages that waited for it may start (set by the hub: the scheduler drains the host). */
  onLeaseEnd: (hostId: string) => void = () => {};

  constructor(
    private readonly ctx: HubContext,
    private readonly gateway: HostGateway,
    private readonly configs: ModelConfigService,
  ) {}

  /** Deliver what is owed when a host comes online or its running tasks drop to zero. */
  start(): void {
    this.unsub = subscribeObj<{ hostIds: string[] }>(this.ctx.bus, OWED_TOPIC, (m) => {
      this.owedSeq++;
      for (const h of m.hostIds) this.clean.delete(h);
    });
    this.unsubReconnect = this.ctx.bus.onReconnect(() => {
      this.owedSeq++;
      this.clean.clear();
    });
    // A reconnect storm costs one query in flight for all the hellos meanwhile, not one per host.
    this.gateway.onHostsUp((hosts) => this.owingQueue.add(...hosts.map((h) => h.hostId)));
    this.gateway.onIdle((hostId) => {
      if (!this.clean.get(hostId)) this.kick(hostId, true);
    });
  }

  close(): void {
    this.unsub();
    this.unsubReconnect();
  }

  private owed(hostIds: string[]): void {
    if (hostIds.length) publishObj(this.ctx.bus, OWED_TOPIC, { hostIds });
  }

  /** `POST /hosts/{id}/model-config`: apply (configId) or revert (null). 409 when busy, offline or too old. */
  async apply(userId: string, hostId: string, configId: string | null): Promise<{ hostId: string; modelConfig: BindingView | null }> {
    const rows = await this.ctx.em().getConnection().execute(`select id from hosts where id = ? and user_id = ?`, [hostId, userId]);
    if (!rows.length) throw fail('NOT_FOUND', 'host not found');
    const config = configId === null ? null : await this.configs.owned(userId, configId);
    return this.serial(hostId, async () => {
      const p = await this.gateway.presence(hostId);
      if (p.status === 'offline') throw fail('HOST_OFFLINE');
      // The busy check is the database's, under the host row lock that accepts and claims take too.
      const lease = await takeSettingsLease(this.ctx.em(), hostId);
      if (!lease) throw fail('HOST_BUSY', 'host has a running task; apply again when it is idle');
      try {
        const out = await this.applyHolding(lease, config);
        this.retry.delete(hostId); // the host answered: idles may deliver at once again
        return out;
      } finally {
        await this.endLease(lease);
      }
    });
  }

  private async applyHolding(lease: SettingsLease, config: ModelConfig | null): Promise<{ hostId: string; modelConfig: BindingView | null }> {
    const hostId = lease.hostId;
    const em = this.ctx.em();
    const previous = await em.findOne(HostModelBinding, { hostId });
    const before = previous ? { configId: previous.configId, status: previous.status, lastError: previous.lastError, deliveredVersion: previous.deliveredVersion } : null;

    if (!config) {
      try {
        await this.gateway.request(hostId, { t: 'settings.apply', engine: ENGINE, config: null });
      } catch (e) {
        // The host may have reverted: what it had is owed again, so it ends where the hub says.
        if (isUnanswered(e)) this.settle(hostId, false); // a silent host: idles do not hold its lease again at once
        if (isUnanswered(e) && before?.configId) await this.owe(hostId, before.configId);
        throw asConflict(e) ?? fail('ENGINE_FAILED', `host could not revert its settings: ${errorText(e)}`);
      }
      if (previous) await em.remove(previous).flush();
      return { hostId, modelConfig: null };
    }

    const b = previous ?? Object.assign(new HostModelBinding(), { hostId });
    Object.assign(b, { configId: config.id, status: 'syncing', lastError: null, deliveredVersion: null, updatedAt: new Date() });
    try {
      await em.persist(b).flush();
    } catch (e) {
      // Deleted while this apply waited for the host's earlier settings write (it was not bound yet).
      if ((e as { code?: string }).code === '23503') throw fail('NOT_FOUND', 'model config not found');
      throw e;
    }
    this.owed([hostId]);
    const outcome = await this.send(lease, config.id);
    if (outcome.notTaken) {
      // Not taken: the binding goes back as it was, and the answer is 409. Taken without an answer, the
      // host may hold the new settings: what it had before (its default: a revert) is owed to it again.
      if (outcome.unanswered) {
        this.settle(hostId, false); // a silent host: idles do not hold its lease again at once; its hello still does
        await this.owe(hostId, before?.configId ?? null);
      }
      else if (before) await em.nativeUpdate(HostModelBinding, { hostId }, { ...before, updatedAt: new Date() });
      else await em.nativeDelete(HostModelBinding, { hostId });
      throw outcome.notTaken;
    }
    return { hostId, modelConfig: (await this.ofHosts([hostId])).get(hostId) ?? null };
  }

  /** The host is owed `configId` (null: its default), sent again when it is next online or idle. */
  private async owe(hostId: string, configId: string | null): Promise<void> {
    await this.ctx.em().nativeUpdate(HostModelBinding, { hostId }, { configId, status: 'failed', lastError: UNANSWERED_ERROR, deliveredVersion: null, updatedAt: new Date() });
    this.owed([hostId]);
  }

  /** Releases a lease (best effort: an unreleased one expires) and lets waiting runs start. */
  private async endLease(lease: SettingsLease): Promise<void> {
    try {
      await releaseSettingsLease(this.ctx.em(), lease);
    } catch (e) {
      this.ctx.log.warn('could not release the settings lease; it expires on its own', { hostId: lease.hostId, err: errorText(e) });
    }
    this.onLeaseEnd(lease.hostId);
  }

  /**
   * A bound configuration changed: hosts that are online and idle receive it now
   * (in the background), the others wait as `pending`.
   */
  async resync(configId: string): Promise<void> {
    const bound = await this.ctx.em().find(HostModelBinding, { configId });
    if (!bound.length) return;
    const presence = await this.gateway.presenceMany(bound.map((b) => b.hostId));
    const now: string[] = [];
    const later: string[] = [];
    for (const b of bound) {
      const p = presence.get(b.hostId);
      (p && p.status !== 'offline' && p.running === 0 ? now : later).push(b.hostId);
    }
    const em = this.ctx.em();
    if (now.length) await em.nativeUpdate(HostModelBinding, { hostId: { $in: now }, configId }, { status: 'syncing', updatedAt: new Date() });
    if (later.length) await em.nativeUpdate(HostModelBinding, { hostId: { $in: later }, configId }, { status: 'pending', updatedAt: new Date() });
    this.owed([...now, ...later]);
    for (const h of now) this.kick(h);
  }

  /** Hosts just online, checked for owed deliveries: one query in flight for all the hellos meanwhile. */
  private readonly owingQueue = new Coalescer<string>((hostIds) => this.kickOwing([...new Set(hostIds)]), 1000);

  /** Of these hosts (just online), kick those that owe a delivery; the rest are known clean. */
  private async kickOwing(hostIds: string[]): Promise<void> {
    if (!hostIds.length) return;
    const seq = this.owedSeq;
    try {
      const rows = await pooled<{ host_id: string }>(this.ctx.orm,
        `select b.host_id from host_model_bindings b left join model_configs c on c.id = b.config_id
          where b.host_id = any(?::text[])
            and (b.config_id is null or not (b.status = 'idle' and b.delivered_version is not distinct from c.version))`,
        [hostIds],
      );
      const owing = new Set(rows.map((r) => r.host_id));
      for (const h of hostIds) {
        if (owing.has(h)) {
          this.clean.delete(h);
          this.kick(h);
        } else if (seq === this.owedSeq) this.clean.set(h, true);
      }
    } catch (e) {
      this.ctx.log.warn('could not read owed model settings', { err: errorText(e) });
      for (const h of hostIds) this.kick(h);
    }
  }

  /** Deliver to one host if it owes anything and can take it now; never throws. `idle`: not while a failure's delay runs (checked in turn: a kick may wait behind the failing one). */
  kick(hostId: string, idle = false): void {
    void this.serial(hostId, async () => (idle && (this.retry.get(hostId)?.at ?? 0) > Date.now() ? undefined : this.deliverOwed(hostId))).catch((e) => this.ctx.log.warn('model settings delivery failed', { hostId, err: errorText(e) }));
  }

  /** `modelConfig` of each host (absent from the map = default). One query for any number of hosts. */
  async ofHosts(hostIds: string[]): Promise<Map<string, BindingView>> {
    const out = new Map<string, BindingView>();
    if (!hostIds.length) return out;
    const rows: Array<{ host_id: string; config_id: string; name: string; status: BindingStatus; last_error: string | null }> = await this.ctx
      .em()
      .getConnection()
      .execute(
        `select b.host_id, b.config_id, c.name, b.status, b.last_error from host_model_bindings b join model_configs c on c.id = b.config_id
         where b.host_id in (${hostIds.map(() => '?').join(',')})`,
        hostIds,
      );
    for (const r of rows) out.set(r.host_id, { configId: r.config_id, name: r.name, status: r.status, lastError: r.last_error });
    return out;
  }

  private async deliverOwed(hostId: string): Promise<void> {
    const em = this.ctx.em();
    const seq = this.owedSeq;
    const b = await em.findOne(HostModelBinding, { hostId });
    const c = b?.configId ? await em.findOne(ModelConfig, { id: b.configId }) : null;
    if (!b || (b.configId !== null && (!c || (b.status === 'idle' && b.deliveredVersion === c.version)))) {
      if (seq === this.owedSeq) this.clean.set(hostId, true);
      return;
    }
    const p = await this.gateway.presence(hostId);
    // Busy (a run, or another node writing): owed again when the host is next idle.
    const lease = p.status === 'offline' ? undefined : await takeSettingsLease(em, hostId);
    if (!lease) {
      if (b.status !== 'failed') await em.nativeUpdate(HostModelBinding, { hostId }, { status: 'pending', updatedAt: new Date() });
      return;
    }
    try {
      // Read again under the lease: a revert or another apply (on any node, each under the lease) may have
      // come between the first read and this lease, and what they wrote is what the host must keep.
      const fresh = em.fork();
      const now = await fresh.findOne(HostModelBinding, { hostId });
      if (now?.configId === null) return this.settle(hostId, await this.sendRevert(hostId));
      const cn = now && (await fresh.findOne(ModelConfig, { id: now.configId }));
      if (!now || !cn || (now.status === 'idle' && now.deliveredVersion === cn.version)) return;
      await em.nativeUpdate(HostModelBinding, { hostId }, { status: 'syncing', updatedAt: new Date() });
      const outcome = await this.send(lease, now.configId);
      this.settle(hostId, !outcome.failed);
      // Went offline mid-way (or lost the lease): owed again when it comes back.
      if (outcome.notTaken?.kind === 'HOST_OFFLINE' || outcome.notTaken?.kind === 'HOST_BUSY') {
        await em.nativeUpdate(HostModelBinding, { hostId }, { status: 'pending', updatedAt: new Date() });
      }
    } finally {
      await this.endLease(lease);
    }
  }

  /** The revert a host owes (under its lease): once it answers, the row goes and the host is on its default. */
  private async sendRevert(hostId: string): Promise<boolean> {
    const em = this.ctx.em();
    try {
      await this.gateway.request(hostId, { t: 'settings.apply', engine: ENGINE, config: null });
    } catch (e) {
      await em.nativeUpdate(HostModelBinding, { hostId, configId: null }, { lastError: errorText(e).slice(0, ERROR_MAX), updatedAt: new Date() });
      return false;
    }
    await em.nativeDelete(HostModelBinding, { hostId, configId: null });
    return true;
  }

  /** A delivery's outcome: a failure spaces out the next tries from idles; a success forgets them. */
  private settle(hostId: string, delivered: boolean): void {
    if (delivered) {
      this.retry.delete(hostId);
      return;
    }
    const delayMs = this.retry.get(hostId)?.delayMs ?? OWED_RETRY_MIN_MS;
    if (this.retry.size >= CLEAN_MAX) this.retry.clear();
    this.retry.set(hostId, { at: Date.now() + delayMs, delayMs: Math.min(delayMs * 2, OWED_RETRY_MAX_MS) });
  }

  /**
   * Sends the latest version of the configuration and records the result on the
   * binding. Loops while the configuration changed during the round trip.
   * `unanswered`: the command went out and no answer came back (the host may have applied it).
   */
  private async send(lease: SettingsLease, configId: string): Promise<{ notTaken?: HubError; unanswered?: boolean; failed?: boolean }> {
    const hostId = lease.hostId;
    const em = this.ctx.em();
    for (;;) {
      // Each command goes out under a lease that outlasts it.
      if (!(await renewSettingsLease(em, lease))) return { notTaken: fail('HOST_BUSY', 'the host\'s settings write took too long; apply again') };
      const c = await em.fork().findOne(ModelConfig, { id: configId });
      if (!c) return {};
      let apiKey: string;
      try {
        apiKey = await this.configs.openKey(c);
      } catch (e) {
        await this.record(hostId, configId, 'failed', errorText(e), null);
        return { failed: true };
      }
      try {
        await this.gateway.request(hostId, { t: 'settings.apply', engine: ENGINE, config: { baseUrl: c.baseUrl, authMode: c.authMode, apiKey, model: c.modelName } });
      } catch (e) {
        const conflict = asConflict(e);
        await this.record(hostId, configId, 'failed', conflict ? conflict.message : errorText(e), null);
        return { notTaken: conflict, unanswered: isUnanswered(e), failed: true };
      }
      const latest = await em.fork().findOne(ModelConfig, { id: configId });
      if (latest && latest.version !== c.version) continue;
      await this.record(hostId, configId, 'idle', null, c.version);
      return {};
    }
  }

  private async record(hostId: string, configId: string, status: BindingStatus, lastError: string | null, deliveredVersion: number | null) {
    const set: Partial<HostModelBinding> = { status, lastError: lastError?.slice(0, ERROR_MAX) ?? null, updatedAt: new Date() };
    if (deliveredVersion !== null) set.deliveredVersion = deliveredVersion;
    await this.ctx.em().nativeUpdate(HostModelBinding, { hostId, configId }, set);
  }

  /** One operation at a time per host on this node. */
  private serial<T>(hostId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(hostId) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(fn);
    const tail = next.catch(() => {});
    this.chains.set(hostId, tail);
    void tail.then(() => {
      if (this.chains.get(hostId) === tail) this.chains.delete(hostId);
    });
    return next;
  }
}

/** The host did not take the command: the 409 answers of the apply endpoint. */
function asConflict(e: unknown): HubError | undefined {
  if (!(e instanceof HubError) || !NOT_TAKEN.has(e.kind)) return undefined;
  return e.kind === 'HOST_OFFLINE' ? fail('HOST_OFFLINE') : fail('HOST_TOO_OLD');
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
