// Where the connectivity test may connect. Link-local and cloud-metadata
// addresses are refused always; loopback and private ones unless the caller
// allows them (MODEL_TEST_ALLOW_PRIVATE=1 on the hub, always on the owner's
// own host). The check runs inside the socket's DNS lookup, so the address
// judged is the address connected to (no rebinding gap), and on literal
// addresses before any socket exists. Shared by the hub and the host CLI.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Link-local and cloud metadata: never a model endpoint, wherever the probe runs. */
const ALWAYS = new BlockList();
ALWAYS.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local; AWS/GCP/Azure IMDS at .169.254
ALWAYS.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
ALWAYS.addAddress('192.0.0.192', 'ipv4'); // Oracle Cloud metadata
ALWAYS.addAddress('168.63.129.16', 'ipv4'); // Azure wireserver
ALWAYS.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
ALWAYS.addSubnet('fe80::', 10, 'ipv6'); // IPv6 link-local

/** Loopback, private, shared and "this network" ranges: the hub's own surroundings. */
const PRIVATE = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
PRIVATE.addAddress('::', 'ipv6');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fec0::', 10, 'ipv6'); // site-local: deprecated, still routed inside some networks

export interface EgressPolicy {
  /** Loopback and private ranges allowed (metadata and link-local never are). */
  allowPrivate: boolean;
}

/** An IPv6 address as 8 16-bit groups, or null when it is not one. */
function groups(address: string): number[] | null {
  let a = address.replace(/%.*$/, ''); // zone id
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const b = v4.slice(1).map(Number);
    a = a.slice(0, v4.index) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...new Array(Math.max(0, fill)).fill(0), ...tail];
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

type Judged = { address: string; family: 'ipv4' | 'ipv6' };
const v4 = (hi: number, lo: number): Judged => ({ address: [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.'), family: 'ipv4' });

/**
 * The addresses an address stands for. IPv6 forms that carry an IPv4 address (mapped ::ffff:0:0/96,
 * compatible ::/96, NAT64 64:ff9b::/96) are that IPv4 address, in whatever notation they came. Tunnel
 * forms are judged as the IPv6 address and as each IPv4 address inside, since a machine with a relay
 * for them sends the packet on there: 6to4 (2002::/16, the address in groups 1–2) and Teredo
 * (2001::/32, the server in groups 2–3, the client inverted in groups 6–7).
 */
function judged(address: string): Judged[] {
  if (isIP(address) === 4) return [{ address, family: 'ipv4' }];
  const g = groups(address);
  if (!g) return [{ address, family: 'ipv6' }];
  const zero5 = g.slice(0, 5).every((x) => x === 0);
  const mapped = zero5 && g[5] === 0xffff;
  const compatible = zero5 && g[5] === 0 && (g[6] !== 0 || g[7] > 1); // not :: or ::1
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (mapped || compatible || nat64) return [v4(g[6], g[7])];
  const self: Judged = { address: g.map((x) => x.toString(16)).join(':'), family: 'ipv6' };
  if (g[0] === 0x2002) return [self, v4(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [self, v4(g[2], g[3]), v4(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [self];
}

type Refused = 'reserved' | 'private';
const ALLOW_HINT = ' (MODEL_TEST_ALLOW_PRIVATE=1 allows it)';

function refusedClass(address: string, policy: EgressPolicy): Refused | null {
  const all = judged(address.replace(/^\[|\]$/g, ''));
  if (all.some((a) => ALWAYS.check(a.address, a.family))) return 'reserved';
  if (!policy.allowPrivate && all.some((a) => PRIVATE.check(a.address, a.family))) return 'private';
  return null;
}

/** Why an address the caller wrote may not be used, or null when it may. */
export function refusal(address: string, policy: EgressPolicy): string | null {
  const c = refusedClass(address, policy);
  if (!c) return null;
  return c === 'reserved' ? `address ${address} is link-local or a cloud metadata endpoint` : `address ${address} is private or loopback${ALLOW_HINT}`;
}

/** Why a name may not be used: the class of what it resolves to, never the address (an internal name's address stays inside). */
function nameRefusal(hostname: string, c: Refused): string {
  return c === 'reserved' ? `${hostname} resolves to a link-local or cloud metadata address` : `${hostname} resolves to a private or loopback address${ALLOW_HINT}`;
}

export class EgressRefused extends Error {}

/** A `lookup` for http.request that resolves every address and refuses the name if any one is forbidden. */
export function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: any, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!addresses.length) return callback(Object.assign(new Error(`host not found (${hostname})`), { code: 'ENOTFOUND', hostname }), '', 0);
      for (const a of addresses) {
        const c = refusedClass(a.address, policy);
        if (c) return callback(new EgressRefused(nameRefusal(hostname, c)), '', 0);
      }
      if (options?.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
