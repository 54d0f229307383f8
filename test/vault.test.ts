// The key vault: AES-256-GCM in a piscina worker. Sealed values open only with their key and their
// owner's id (aad); a close right after the pool started waits for its worker to have loaded before
// ending it (a worker terminated mid-load aborted the whole process now and then: vault.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Vault } from '../src/model-configs/vault.js';

test('seal and open: the same key and owner only; the plaintext never in the sealed form', async () => {
  const key = randomBytes(32);
  const v = new Vault(key, { maxThreads: 1 });
  const other = new Vault(randomBytes(32), { maxThreads: 1 });
  try {
    const sealed = await v.seal('sk-vault-secret-0123456789', 'mc_1');
    assert.match(sealed, /^v1\./);
    assert.ok(!sealed.includes('sk-vault-secret'));
    assert.equal(await v.open(sealed, 'mc_1'), 'sk-vault-secret-0123456789');
    await assert.rejects(v.open(sealed, 'mc_2'), /vault: open failed/, 'another owner');
    await assert.rejects(other.open(sealed, 'mc_1'), /vault: open failed/, 'another key');
  } finally {
    await v.close();
    await other.close();
  }
});

test('a close right after the start ends the pool once its worker has loaded', async () => {
  for (let i = 0; i < 5; i++) {
    const v = new Vault(randomBytes(32), { maxThreads: 1 });
    await v.close();
    assert.equal(v.threads, 0, 'no worker left');
  }
});
