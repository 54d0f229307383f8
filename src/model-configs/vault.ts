// The key vault: seals and opens model-endpoint keys with AES-256-GCM on a
// piscina worker pool, so the event loop that serves HTTP never runs the cipher.
// Key = secrets.vaultKey (derived from SECRET_KEY).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { Piscina } from 'piscina';

// The worker is plain .mjs: tsx runs src/ directly, and a tsup build emits it
// as its own entry (dist/model-configs/vault-worker.js) beside the bundled chunks.
const WORKER_CANDIDATES = ['./vault-worker.mjs', './vault-worker.js', './model-configs/vault-worker.js', './model-configs/vault-worker.mjs'];

export function vaultWorkerPath(): string {
  for (const rel of WORKER_CANDIDATES) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error('vault worker file not found next to ' + fileURLToPath(import.meta.url));
}

/** Longest wait at close for the pool's worker to finish loading. */
const CLOSE_WAIT_MS = 10_000;

export class Vault {
  private readonly pool: Piscina;
  private readonly key: Uint8Array;

  constructor(key: Buffer, opts: { maxThreads?: number } = {}) {
    if (key.length !== 32) throw new Error('vault key must be 32 bytes');
    this.key = new Uint8Array(key);
    const max = opts.maxThreads ?? Math.max(1, Math.min(2, cpus().length - 1));
    this.pool = new Piscina({ filename: vaultWorkerPath(), minThreads: 1, maxThreads: max, idleTimeout: 60_000 });
  }

  seal(plaintext: string, aad: string): Promise<string> {
    return this.pool.run({ op: 'seal', key: this.key, data: plaintext, aad });
  }

  open(sealed: string, aad: string): Promise<string> {
    return this.pool.run({ op: 'open', key: this.key, data: sealed, aad });
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  /**
   * Waits (at most CLOSE_WAIT_MS) for the worker started with the pool to have loaded, then ends the pool.
   * A worker terminated while its modules were still evaluating aborted the whole process now and then
   * (V8 "Check failed: (location_) != nullptr" in SourceTextModule::ExecuteAsyncModule, nodejs/node#53238):
   * most likely this (the one thread such a hub starts and ends): a hub closed within seconds of its start, as tests do, on a loaded machine.
   */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.pool.run({ op: 'ready' }).catch(() => undefined),
      new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    await this.pool.destroy();
  }
}
