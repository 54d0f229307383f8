// Presence shared by every hub node, in Redis. One hash per host
// (`presence:<hostId>`: node, running, capacity, engines, lastSeen, the
// writing node's boot) with a long TTL that the holding node extends a slice
// of its hosts at a time — never a publish per heartbeat. Whether an entry is
// online is its node's to say: each node keeps `node:<nodeId>` alive with a
// short TTL, holding its boot id and the time of its last renewal; an entry
// whose node key is gone, or holds another boot (the node restarted under the
// same NODE_ID), reads as offline, so the hosts of a killed node read offline
// within NODE_TTL_MS, and an entry of a live node reads last seen at the
// node's latest renewal. A closed channel's entry is removed by its node,
// the removal retried until Redis takes it; the entry TTL only collects what
// a dead node left behind. The writes of one event-loop turn (set, patch,
// remove) go out in call order as one pipeline, one socket write: a connect
// storm's hellos cost one write per turn, not one each; a read sends the
// writes queued before it first, so it sees them.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Engine } from '../../host-protocol/frames.js';
import { INTERNED_LIST_MAX_CHARS, parsedEngines, type Presence, type PresenceEntry, type Refreshed, type Written } from './presence.js';
import type { Logger } from '../log.js';
import { GET, NODE_DEL, PATCH, REFRESH, REMOVE, SET, SET_POLLED } from './presence-scripts.js';

/** A node's liveness key lives this long without renewal. */
export const NODE_TTL_MS = 5000;
const NODE_RENEW_MS = 1500;
/** Largest number of hosts in one script call. */
const CHUNK = 500;

type WriteCommand = 'presenceSet' | 'presencePatch' | 'presenceRemove';
interface QueuedWrite {
  cmd: WriteCommand;
  args: Array<string | number>;
  done(r: unknown): void;
  fail(e: unknown): void;
}

type Scripts = Redis & {
  presenceSet(n: number, ...a: Array<string | number>): Promise<Array<string | number>>;
  presenceGet(n: number, ...a: string[]): Promise<Array<Array<string | null>>>;
  presenceRefresh(n: number, ...a: Array<string | number>): Promise<number[]>;
  presencePatch(key: string, ...a: Array<string | number>): Promise<number>;
  presenceRemove(key: string, node: string): Promise<number>;
  presenceNodeDel(key: string, boot: string): Promise<number>;
  presenceSetPolled(key: string, ...a: Array<string | number>): Promise<number>;
};

/** Removals that failed, kept for another try: at most this many (the TTL collects the rest). */
const UNREMOVED_MAX = 100_000;

export class RedisPresence implements Presence {
  private readonly redis: Scripts;
  private readonly nodeKey: string;
  private readonly renew: NodeJS.Timeout;
  private readonly onReady: () => void;
  /** Parsed engine lists by their JSON: hosts mostly report the same few. */
  private engines = new Map<string, Engine[]>();
  /**
   * The entries this node wrote for the hosts it holds, kept as patched: a Redis that restarted
   * empty loses them, and the next refresh writes them again (presence rebuilt without a reconnect).
   */
  private mine = new Map<string, PresenceEntry>();
  /** Per host, what the last set() answered (see takenOverFrom). */
  private previous = new Map<string, Promise<Written>>();
  /** Writes of this turn, sent at its end (or before the next read) in call order. */
  private queue: QueuedWrite[] = [];
  /** This process's boot: entries written under another (this node id before a restart) read offline. */
  private readonly boot = randomBytes(6).toString('hex');
  /** Removals Redis did not take (host → node), tried again at each refresh and when Redis is ready. */
  private unremoved = new Map<string, string>();

  constructor(
    redis: Redis,
    private readonly keyOf: (k: string) => string,
    nodeId: string,
    private readonly log?: Logger,
    /** Liveness key lifetime and renewal period (tests shorten them). */
    timing: { nodeTtlMs: number; renewMs: number } = { nodeTtlMs: NODE_TTL_MS, renewMs: NODE_RENEW_MS },
  ) {
    const r = redis as unknown as Partial<Scripts>;
    if (!r.presenceGet) {
      redis.defineCommand('presenceSet', { lua: SET });
      redis.defineCommand('presenceGet', { lua: GET });
      redis.defineCommand('presenceRefresh', { lua: REFRESH });
      redis.defineCommand('presencePatch', { lua: PATCH, numberOfKeys: 1 });
      redis.defineCommand('presenceRemove', { lua: REMOVE, numberOfKeys: 1 });
      redis.defineCommand('presenceNodeDel', { lua: NODE_DEL, numberOfKeys: 1 });
      redis.defineCommand('presenceSetPolled', { lua: SET_POLLED, numberOfKeys: 1 });
    }
    this.redis = redis as Scripts;
    this.nodeKey = keyOf(`node:${nodeId}`);
    const beat = () => void this.redis.set(this.nodeKey, `${this.boot}:${Date.now()}`, 'PX', timing.nodeTtlMs).catch((e) => this.warn(e));
    beat();
    this.renew = setInterval(beat, timing.renewMs);
    this.renew.unref();
    // A Redis that restarted empty lost the liveness key too: every entry of this node reads offline until it is back.
    // Removals that failed meanwhile go first: the beat makes their entries read online again.
    this.onReady = () => {
      this.retryRemovals();
      this.sendWrites(); // ahead of the beat on the one connection
      beat();
    };
    redis.on('ready', this.onReady);
  }

  async set(hostId: string, e: PresenceEntry, ttlMs: number): Promise<Written> {
    const node = e.nodeId ?? '';
    if (e.nodeId) this.mine.set(hostId, { ...e });
    else this.mine.delete(hostId);
    this.unremoved.delete(hostId);
    const written = this.write<[string, number]>('presenceSet', [this.key(hostId), ...this.fields(e, ttlMs)])
      .then(([p, epoch]): Written => ({ prev: p && p !== node ? p : null, epoch: Number(epoch) }))
      .catch((err): Written => {
        this.warn(err);
        return { prev: null, epoch: 0 };
      });
    if (this.previous.size > 10_000) this.previous.clear();
    this.previous.set(hostId, written);
    return written;
  }

  async setPolled(hostId: string, e: PresenceEntry, ttlMs: number): Promise<boolean> {
    this.sendWrites(); // after the writes queued before it, on the one connection
    const polled = { ...e, nodeId: null };
    const written = (await this.redis.presenceSetPolled(this.key(hostId), ...this.fields(polled, ttlMs), this.keyOf('node:'))) === 1;
    if (written) this.mine.delete(hostId);
    return written;
  }

  /**
   * The node that still held the host when it said hello here, if another
   * one: that node did not release the channel (it died, or has not yet seen
   * the socket drop). Answers once per hello; null when the handover was clean.
   */
  async takenOverFrom(hostId: string): Promise<string | null> {
    const p = this.previous.get(hostId);
    this.previous.delete(hostId);
    return p ? (await p).prev : null;
  }

  /** An entry's SET arguments after its key; an entry of no node has no boot. */
  private fields(e: PresenceEntry, ttlMs: number): Array<string | number> {
    return [e.nodeId ?? '', e.running, e.capacity, JSON.stringify(e.engines), e.lastSeenAt, ttlMs, e.nodeId ? this.boot : ''];
  }

  async refresh(hostIds: string[], nodeId: string | null, ttlMs: number): Promise<Refreshed> {
    this.retryRemovals();
    this.sendWrites();
    const restored: string[] = [];
    let ok = true;
    const failed = (err: unknown) => {
      this.warn(err);
      ok = false;
    };
    for (let i = 0; i < hostIds.length; i += CHUNK) {
      const ids = hostIds.slice(i, i + CHUNK);
      const keys = ids.map((id) => this.key(id));
      const gone = await this.redis.presenceRefresh(keys.length, ...keys, nodeId ?? '', ttlMs, this.boot).catch((e) => (failed(e), []));
      for (const at of gone) {
        const e = this.mine.get(ids[at - 1]);
        if (!e || e.nodeId !== nodeId) continue;
        const written = await this.redis.presenceSet(1, this.key(ids[at - 1]), ...this.fields(e, ttlMs))
          .then(() => true, (err) => (failed(err), false));
        if (written) restored.push(ids[at - 1]);
      }
      if (gone.length) this.log?.info('presence rewritten after Redis lost it', { hosts: gone.length });
    }
    return { restored, ok };
  }

  async patch(hostId: string, fields: Partial<Pick<PresenceEntry, 'running' | 'engines' | 'capacity'>>): Promise<void> {
    const args: Array<string | number> = [];
    if (fields.running !== undefined) args.push('r', fields.running);
    if (fields.capacity !== undefined) args.push('c', fields.capacity);
    if (fields.engines !== undefined) args.push('e', JSON.stringify(fields.engines));
    if (!args.length) return;
    const m = this.mine.get(hostId);
    if (m) Object.assign(m, fields);
    await this.write('presencePatch', [this.key(hostId), ...args]).catch((e) => this.warn(e));
  }

  async remove(hostId: string, nodeId: string | null): Promise<void> {
    if (this.mine.get(hostId)?.nodeId === nodeId) this.mine.delete(hostId);
    this.unremoved.delete(hostId);
    await this.write('presenceRemove', [this.key(hostId), nodeId ?? '']).catch((e) => {
      this.warn(e);
      // Its node lives on, so the entry would read online until its TTL: tried again (unless the host came back here meanwhile).
      if (nodeId && !this.mine.has(hostId) && this.unremoved.size < UNREMOVED_MAX) this.unremoved.set(hostId, nodeId);
    });
  }

  /** Sends again the removals Redis did not take; one that fails again is kept for the next try. */
  private retryRemovals(): void {
    if (!this.unremoved.size) return;
    const again = [...this.unremoved];
    this.unremoved.clear();
    for (const [hostId, nodeId] of again) void this.remove(hostId, nodeId);
  }

  /** Removals waiting for another try (a seam for tests and metrics). */
  get pendingRemovals(): number {
    return this.unremoved.size;
  }

  async get(hostId: string): Promise<PresenceEntry | undefined> {
    return (await this.getMany([hostId])).get(hostId);
  }

  async getMany(hostIds: string[]): Promise<Map<string, PresenceEntry>> {
    this.sendWrites(); // ahead of this read on the one connection
    const out = new Map<string, PresenceEntry>();
    for (let i = 0; i < hostIds.length; i += CHUNK) {
      const ids = hostIds.slice(i, i + CHUNK);
      // A Redis outage rejects here: callers see an error, not every host offline.
      const rows = await this.redis.presenceGet(ids.length, ...ids.map((id) => this.key(id)), this.keyOf('node:'));
      rows.forEach((v, j) => {
        if (!v || v[0] === null || v[0] === undefined) return;
        out.set(ids[j], { nodeId: v[0] || null, running: Number(v[1]), capacity: Number(v[2]), engines: this.parseEngines(v[3]), lastSeenAt: Number(v[4]) });
      });
    }
    return out;
  }

  async close(): Promise<void> {
    clearInterval(this.renew);
    this.redis.off('ready', this.onReady);
    this.sendWrites();
    // Our hosts read offline at once rather than after NODE_TTL_MS; a later boot's key is left alone.
    await this.redis.presenceNodeDel(this.nodeKey, this.boot).catch(() => {});
  }

  /** Queues a write for the end of this turn. */
  private write<T>(cmd: WriteCommand, args: Array<string | number>): Promise<T> {
    return new Promise<T>((done, fail) => {
      if (this.queue.push({ cmd, args, done: done as (r: unknown) => void, fail }) === 1) setImmediate(() => this.sendWrites());
    });
  }

  /**
   * The queued writes, in call order: consecutive sets as one script call (up to CHUNK hosts), every
   * other write a command of its own; one command alone, several as one pipeline (one socket write).
   */
  private sendWrites(): void {
    const q = this.queue;
    if (!q.length) return;
    this.queue = [];
    const calls: QueuedWrite[][] = [];
    for (const w of q) {
      const last = calls[calls.length - 1];
      if (w.cmd === 'presenceSet' && last?.[0].cmd === 'presenceSet' && last.length < CHUNK) last.push(w);
      else calls.push([w]);
    }
    const args = (ws: QueuedWrite[]) => (ws[0].cmd === 'presenceSet' ? [ws.length, ...ws.map((w) => w.args[0]), ...ws.flatMap((w) => w.args.slice(1))] : ws[0].args);
    const answer = (ws: QueuedWrite[], r: unknown) => {
      if (ws[0].cmd !== 'presenceSet') return ws[0].done(r);
      const flat = r as Array<string | number>;
      ws.forEach((w, i) => w.done([flat[2 * i], flat[2 * i + 1]]));
    };
    const failAll = (ws: QueuedWrite[], e: unknown) => ws.forEach((w) => w.fail(e));
    if (calls.length === 1) {
      const ws = calls[0];
      return void (this.redis[ws[0].cmd] as (...a: Array<string | number>) => Promise<unknown>).apply(this.redis, args(ws)).then((r) => answer(ws, r), (e) => failAll(ws, e));
    }
    const p = this.redis.pipeline() as unknown as Record<WriteCommand, (...a: Array<string | number>) => unknown> & { exec(): Promise<Array<[Error | null, unknown]> | null> };
    for (const ws of calls) p[ws[0].cmd](...args(ws));
    p.exec().then(
      (res) => calls.forEach((ws, i) => (res?.[i] ? (res[i][0] ? failAll(ws, res[i][0]) : answer(ws, res[i][1])) : failAll(ws, new Error('presence write not answered')))),
      (e) => calls.forEach((ws) => failAll(ws, e)),
    );
  }

  private key(hostId: string): string {
    return this.keyOf(`presence:${hostId}`);
  }

  private parseEngines(raw: string | null): Engine[] {
    if (!raw) return [];
    if (raw.length > INTERNED_LIST_MAX_CHARS) return parsedEngines(raw); // not kept: the cache is bounded in bytes too
    let list = this.engines.get(raw);
    if (!list) {
      list = parsedEngines(raw);
      if (this.engines.size > 10_000) this.engines.clear();
      this.engines.set(raw, list);
    }
    return list;
  }

  private lastWarn = 0;
  private warn(e: unknown): void {
    const now = Date.now();
    if (now - this.lastWarn < 5000) return;
    this.lastWarn = now;
    this.log?.warn('presence write failed', { err: e instanceof Error ? e.message : String(e) });
  }
}
