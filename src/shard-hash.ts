// Which of `n` shards a key belongs to: FNV-1a (32 bits) of the key's UTF-16
// code units, modulo n. Every node computes the same answer for the same key
// and n: the bus's keyed topics and the presence keys (REDIS_SHARD_URLS).
export function shardOf(key: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
}
