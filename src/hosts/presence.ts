// Where each host is: which node holds its channel, how many runs it has,
// its capacity and engines. Entries live for a TTL and are refreshed by the
// holding node's heartbeat sweep, so a dead node's hosts read offline once
// the TTL passes. The in-process implementation serves one node; a Redis one
// (same interface, keys with TTL) serves several.
import type { Engine } from '../../host-protocol/frames.js';

export interface PresenceEntry {
  /** Node holding the channel; null for a host that only polls over HTTP. */
  nodeId: string | null;
  running: number;
  capacity: number;
  engines: Engine[];
  /**
   * Unix ms of the last sign of life: for a host whose channel a live node holds, that node's latest
   * liveness stamp (the node closes a channel silent for the heartbeat window); else the entry's own.
   */
  lastSeenAt: number;
}

/** What a presence write answers. */
export interface Written {
  /** The other node whose entry the write replaced (null when none or the same node): that node held the host's channel. */
  prev: string | null;
  /**
   * The write's place among every write of the host's entry, on any node: a later write has a larger
   * epoch, also after the entry was removed or expired. 0 when the write failed (its place unknown).
   */
  epoch: number;
}

export interface Presence {
  /** Writes the entry (atomically with reading the previous holder and taking the next epoch). */
  set(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<Written>;
  /**
   * Writes the entry of a host that polls over HTTP (its nodeId ignored: none) unless a live node holds
   * the host's channel, in one step with that check; answers whether it wrote.
   */
  setPolled(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<boolean>;
  /**
   * Extends the TTL of entries held by nodeId. Answers the hosts whose entries the store had lost and
   * were written again (a Redis that restarted empty), and `ok: false` when a write failed (the store
   * unreachable): the caller tries again.
   */
  refresh(hostIds: string[], nodeId: string | null, ttlMs: number): Promise<Refreshed>;
  /** Changes fields of a live entry; no-op when absent. */
  patch(hostId: string, fields: Partial<Pick<PresenceEntry, 'running' | 'engines' | 'capacity'>>): Promise<void>;
  /** Removes the entry only while nodeId still holds it (a newer channel elsewhere wins). */
  remove(hostId: string, nodeId: string | null): Promise<void>;
  get(hostId: string): Promise<PresenceEntry | undefined>;
  getMany(hostIds: string[]): Promise<Map<string, PresenceEntry>>;
  close(): Promise<void>;
}

export interface Refreshed {
  restored: string[];
  ok: boolean;
}

type Stored = PresenceEntry & { expiresAt: number };

/**
 * An entry as kept, written out field by field: on Node 20 `{ ...entry, expiresAt }` gives every
 * object it makes a hidden class of its own, about 300 bytes more per host (bench/heap-diff.ts).
 */
function stored(e: PresenceEntry, expiresAt: number): Stored {
  return { nodeId: e.nodeId, running: e.running, capacity: e.capacity, engines: e.engines, lastSeenAt: e.lastSeenAt, expiresAt };
}

export class LocalPresence implements Presence {
  private entries = new Map<string, Stored>();
  /** One counter for every host: in one process it orders each host's writes as well. */
  private epoch = 0;

  async set(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<Written> {
    const prev = this.live(hostId)?.nodeId ?? null;
    this.entries.set(hostId, stored(entry, Date.now() + ttlMs));
    return { prev: prev && prev !== entry.nodeId ? prev : null, epoch: ++this.epoch };
  }

  async setPolled(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<boolean> {
    if (this.live(hostId)?.nodeId) return false; // in one process every node id is this live node's
    await this.set(hostId, { ...entry, nodeId: null }, ttlMs);
    return true;
  }

  async refresh(hostIds: string[], nodeId: string | null, ttlMs: number): Promise<Refreshed> {
    const exp = Date.now() + ttlMs;
    for (const id of hostIds) {
      const e = this.entries.get(id);
      if (e && e.nodeId === nodeId) e.expiresAt = exp;
    }
    return { restored: [], ok: true }; // in process: nothing is lost behind the node's back
  }

  async patch(hostId: string, fields: Partial<Pick<PresenceEntry, 'running' | 'engines' | 'capacity'>>): Promise<void> {
    const e = this.live(hostId);
    if (e) Object.assign(e, fields);
  }

  async remove(hostId: string, nodeId: string | null): Promise<void> {
    const e = this.entries.get(hostId);
    if (e && e.nodeId === nodeId) this.entries.delete(hostId);
  }

  async get(hostId: string): Promise<PresenceEntry | undefined> {
    return this.live(hostId);
  }

  async getMany(hostIds: string[]): Promise<Map<string, PresenceEntry>> {
    const out = new Map<string, PresenceEntry>();
    for (const id of hostIds) {
      const e = this.live(id);
      if (e) out.set(id, e);
    }
    return out;
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  private live(hostId: string): Stored | undefined {
    const e = this.entries.get(hostId);
    if (!e) return undefined;
    const now = Date.now();
    if (e.expiresAt <= now) {
      this.entries.delete(hostId);
      return undefined;
    }
    // Held by a node: in one process, this one, alive now (see PresenceEntry.lastSeenAt).
    if (e.nodeId !== null) e.lastSeenAt = now;
    return e;
  }
}

/**
 * Engine lists longer than this (as JSON) are not interned by the gateway or presence: a usual list is
 * ≈ 60 characters and shared by many hosts; one host can send thousands of distinct large ones, and a
 * cache bounded only in entries would keep them all.
 */
export const INTERNED_LIST_MAX_CHARS = 2048;

/** A presence entry's engines field, parsed; malformed reads as none. */
export function parsedEngines(raw: string): Engine[] {
  try {
    return JSON.parse(raw) as Engine[];
  } catch {
    return [];
  }
}
