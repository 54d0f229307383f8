// Piscina worker for the key vault: AES-256-GCM with node:crypto only, plain
// JavaScript so that it loads unchanged from tsx (dev, tests) and from a build.
// Sealed form: "v1." + base64url(iv[12] | tag[16] | ciphertext). `aad` binds a
// sealed value to its owner (the configuration id), so rows cannot be swapped.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export function seal(key, plaintext, aad) {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  if (aad) c.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return 'v1.' + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
}

export function open(key, sealed, aad) {
  if (typeof sealed !== 'string' || !sealed.startsWith('v1.')) throw new Error('vault: unknown sealed format');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  if (raw.length < 28) throw new Error('vault: sealed value too short');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  if (aad) d.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
}

/** Task: { op: 'seal' | 'open', key: Uint8Array(32), data: string, aad?: string }. */
export default function vaultTask(task) {
  if (task.op === 'ready') return true; // the pool's close waits for this worker to have loaded (vault.ts)
  const key = Buffer.from(task.key);
  try {
    return task.op === 'seal' ? seal(key, task.data, task.aad) : open(key, task.data, task.aad);
  } catch {
    // Never echo the input: it may be a key. A failed open means a wrong SECRET_KEY or a tampered row.
    throw new Error(`vault: ${task.op} failed`);
  }
}
