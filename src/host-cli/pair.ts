// Exchanges a single-use pair key for this host's long-lived credential.
import { savePairing, type Pairing } from './home.js';

export async function pair(hub: string, pairKey: string, name: string): Promise<{ pairing: Pairing; file: string }> {
  const base = hub.replace(/\/+$/, '');
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
  const pairing: Pairing = { hub: base, hostId: body.data.hostId, credential: body.data.credential, name };
  return { pairing, file: savePairing(pairing) };
}
