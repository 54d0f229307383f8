// Presence spread over several Redis instances (REDIS_SHARD_URLS): each host's
// entry lives on the instance its id hashes to, written and read there by a
// RedisPresence of its own, which also keeps this node's liveness key on that
// instance (so an entry and the key that says whether its node lives are
// always read in one script). Spread, no single instance carries every host's
// entry and its extensions (docs/capacity.md).
import type { Redis } from 'ioredis';
import { shardOf } from '../shard-hash.js';
import type { Logger } from '../log.js';
import type { Presence, PresenceEntry, Refreshed, Written } from './presence.js';
import { RedisPresence } from './presence-redis.js';

/** A cluster node's presence: on the command connection, or spread over the shards' when there are shards. */
export function presenceIn(redis: { client: Redis; shardClients: Redis[]; key(name: string): string }, nodeId: string, log?: Logger): RedisPresence | ShardedPresence {
  const on = (c: Redis) => new RedisPresence(c, (k) => redis.key(k), nodeId, log);
  return redis.shardClients.length ? new ShardedPresence(redis.shardClients.map(on)) : on(redis.client);
}

export class ShardedPresence implements Presence {
  constructor(private readonly parts: RedisPresence[]) {}

  private of(hostId: string): RedisPresence {
    return this.parts[shardOf(hostId, this.parts.length)];
  }

  /** Host ids grouped by the part holding them, in their order. */
  private split(hostIds: string[]): Map<RedisPresence, string[]> {
    const by = new Map<RedisPresence, string[]>();
    for (const id of hostIds) {
      const p = this.of(id);
      const list = by.get(p);
      if (list) list.push(id);
      else by.set(p, [id]);
    }
    return by;
  }

  set(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<Written> {
    return this.of(hostId).set(hostId, entry, ttlMs);
  }

  setPolled(hostId: string, entry: PresenceEntry, ttlMs: number): Promise<boolean> {
    return this.of(hostId).setPolled(hostId, entry, ttlMs);
  }

  takenOverFrom(hostId: string): Promise<string | null> {
    return this.of(hostId).takenOverFrom(hostId);
  }

  async refresh(hostIds: string[], nodeId: string | null, ttlMs: number): Promise<Refreshed> {
    const done = await Promise.all([...this.split(hostIds)].map(([p, ids]) => p.refresh(ids, nodeId, ttlMs)));
    return { restored: done.flatMap((r) => r.restored), ok: done.every((r) => r.ok) };
  }

  patch(hostId: string, fields: Partial<Pick<PresenceEntry, 'running' | 'engines' | 'capacity'>>): Promise<void> {
    return this.of(hostId).patch(hostId, fields);
  }

  remove(hostId: string, nodeId: string | null): Promise<void> {
    return this.of(hostId).remove(hostId, nodeId);
  }

  get(hostId: string): Promise<PresenceEntry | undefined> {
    return this.of(hostId).get(hostId);
  }

  async getMany(hostIds: string[]): Promise<Map<string, PresenceEntry>> {
    const parts = await Promise.all([...this.split(hostIds)].map(([p, ids]) => p.getMany(ids)));
    if (parts.length === 1) return parts[0];
    const out = new Map<string, PresenceEntry>();
    for (const m of parts) for (const [k, v] of m) out.set(k, v);
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.close()));
  }
}
