// Maps and sets whose keys come and go all the time (a run's state by its id,
// the sessions of batches in flight) in objects that live as long as the
// process. In V8 a Map's hash table is replaced as keys come and go, and the
// new one is allocated in the old generation once the current one is there (it
// is, after a quiet second or two). A replaced table is not cleared: it still
// points at every value it held, and until the next full collection those
// pointers keep young values alive through each scavenge, so nearly every
// value — with all it references — is promoted, and the old generation fills
// with short-lived objects (bench/RESULTS.md, twenty-ninth session: a run's
// state and its promises, 1 KB per message at 1,000 messages/s). Copying the
// entries into a fresh Map now and then puts the table back in the young
// generation, where a busy map's tables then stay (each replaced long before
// two scavenges), and nothing a young table held is kept.
//
// Iteration: a loop that changes the map while it iterates sees the entries as
// they were when the map was last renewed, not the changes (which Map would
// show) — the loops over these maps change them only by `delete`.

/** A renewal copies the entries after this many changes at least, or four times the size (amortised: a constant per change). */
const RENEW_AFTER = 256;

export class ChurnMap<K, V> implements Iterable<[K, V]> {
  private m = new Map<K, V>();
  private changes = 0;

  get size(): number {
    return this.m.size;
  }

  get(k: K): V | undefined {
    return this.m.get(k);
  }

  has(k: K): boolean {
    return this.m.has(k);
  }

  set(k: K, v: V): this {
    const size = this.m.size;
    this.m.set(k, v);
    if (this.m.size !== size) this.changed();
    return this;
  }

  delete(k: K): boolean {
    if (!this.m.delete(k)) return false;
    this.changed();
    return true;
  }

  clear(): void {
    this.m = new Map();
    this.changes = 0;
  }

  keys(): IterableIterator<K> {
    return this.m.keys();
  }

  values(): IterableIterator<V> {
    return this.m.values();
  }

  entries(): IterableIterator<[K, V]> {
    return this.m.entries();
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.m.entries();
  }

  private changed(): void {
    if (++this.changes < RENEW_AFTER || this.changes < 4 * this.m.size) return;
    this.m = new Map(this.m);
    this.changes = 0;
  }
}

export class ChurnSet<K> implements Iterable<K> {
  private s = new Set<K>();
  private changes = 0;

  get size(): number {
    return this.s.size;
  }

  has(k: K): boolean {
    return this.s.has(k);
  }

  add(k: K): this {
    const size = this.s.size;
    this.s.add(k);
    if (this.s.size !== size) this.changed();
    return this;
  }

  delete(k: K): boolean {
    if (!this.s.delete(k)) return false;
    this.changed();
    return true;
  }

  clear(): void {
    this.s = new Set();
    this.changes = 0;
  }

  values(): IterableIterator<K> {
    return this.s.values();
  }

  [Symbol.iterator](): IterableIterator<K> {
    return this.s.values();
  }

  private changed(): void {
    if (++this.changes < RENEW_AFTER || this.changes < 4 * this.s.size) return;
    this.s = new Set(this.s);
    this.changes = 0;
  }
}
