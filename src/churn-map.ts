// Maps and sets whose keys come and go all the time (a run's state by its id,
// the sessions of batches in flight) in objects that live as long as the
// process. In V8 a Map's hash table is replaced as keys come and go, and the
// new one is allocated in the old generation once the current one is there (it
// is, after a quiet second or two). A replaced table is not cleared: it still
// points at every value it held when replaced, and until the next full
// collection those pointers keep young values alive through each scavenge, so
// nearly every value — with all it references — is promoted, and the old
// generation fills with short-lived objects (bench/RESULTS.md, twenty-ninth
// session: a run's state and what it held, ≈ 0.8 KB per message). Copying the
// entries into a fresh Map now and then puts the table back in the young
// generation, where a busy map's tables then stay (each replaced long before
// two scavenges), and nothing a young table held is kept.
//
// Iteration: a loop that changes the map as it goes may, once a change renews
// it, go on over the entries as they were then (a Map would show the later
// changes; deleting the entry at hand is safe: test/churn-map.test.ts). The
// hub's loops over these maps do not change them.

/** A renewal copies the entries after this many changes at least, or four times the size (amortised: a constant per change). */
const RENEW_AFTER = 256;

/** Whether a map or set changed `changes` times since its last renewal, now of `size` entries, is due for one. */
const renewalDue = (changes: number, size: number) => changes >= RENEW_AFTER && changes >= 4 * size;

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
    if (!renewalDue(++this.changes, this.m.size)) return;
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
    if (!renewalDue(++this.changes, this.s.size)) return;
    this.s = new Set(this.s);
    this.changes = 0;
  }
}
