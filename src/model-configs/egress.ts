// Where the connectivity test may connect. Link-local and cloud-metadata
// addresses are refused always; private and loopback ones only when
// MODEL_TEST_BLOCK_PRIVATE=1. The check runs inside the socket's DNS lookup,
// so the address judged is the address connected to (no rebinding gap).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { fail } from '../errors.js';

const ALWAYS = new BlockList();
ALWAYS.addSubnet('169.254.0.0', 16, 'ipv4');
ALWAYS.addAddress('fd00:ec2::254', 'ipv6');

const PRIVATE = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
PRIVATE.addAddress('::', 'ipv6');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fe80::', 10, 'ipv6');

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
function normalize(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Why an address may not be used, or null when it may. */
export function refusal(address: string, blockPrivate: boolean): string | null {
  const a = normalize(address);
  if (ALWAYS.check(a.address, a.family)) return `address ${address} is link-local or a cloud metadata endpoint`;
  if (blockPrivate && PRIVATE.check(a.address, a.family)) return `address ${address} is private or loopback (MODEL_TEST_BLOCK_PRIVATE=1)`;
  return null;
}

export class EgressRefused extends Error {}

/** A `lookup` for http.request that resolves every address and refuses the name if any one is forbidden. */
export function guardedLookup(blockPrivate: boolean) {
  return (hostname: string, options: any, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const why = refusal(a.address, blockPrivate);
        if (why) return callback(new EgressRefused(why), '', 0);
      }
      if (options?.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** Syntax rule for a stored or tested baseUrl: absolute http(s), no credentials, no query or fragment. */
export function checkBaseUrl(baseUrl: string): URL {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw fail('VALIDATION', 'body/baseUrl: must be an absolute http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw fail('VALIDATION', 'body/baseUrl: must use http or https');
  if (u.username || u.password) throw fail('VALIDATION', 'body/baseUrl: must not carry credentials');
  if (u.search || u.hash) throw fail('VALIDATION', 'body/baseUrl: must not carry a query or fragment');
  return u;
}
