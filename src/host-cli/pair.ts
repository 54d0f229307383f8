// Exchanges a single-use pair key for this host's long-lived credential.
import { createHash } from 'node:crypto';
import { savePairing, type Pairing } from './home.js';

const hubOf = (hub: string) => hub.replace(/\/+$/, '');
const digest = (pairKey: string) => createHash('sha256').update(pairKey).digest('hex');

/**
 * Whether `p` was made with `pairKey` (at `hub`, when one is given): the key is spent, and the same
 * command run again (a restart) goes on with the pairing it made. Only the key's digest is kept.
 */
export function pairedWith(p: Pairing, pairKey: string, hub?: string): boolean {
  return p.pairKeySha256 === digest(pairKey) && (hub === undefined || hubOf(hub) === p.hub);
}

export async function pair(hub: string, pairKey: string, name: string): Promise<{ pairing: Pairing; file: string }> {
  const base = hubOf(hub);
  let res: Response;
  try {
    res = await fetch(`${base}/api/v1/hosts/pair`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pairKey, name }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    throw new Error(`cannot reach the hub at ${base}: ${(e as Error).message}`);
  }
  let body: any;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  if (res.status !== 201 || !body?.data?.credential) {
    throw new Error(`pairing refused (${res.status}): ${body?.message ?? 'unexpected answer'}`);
  }
  const pairing: Pairing = { hub: base, hostId: body.data.hostId, credential: body.data.credential, name, pairKeySha256: digest(pairKey) };
  return { pairing, file: savePairing(pairing) };
}
