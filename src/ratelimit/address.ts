// The address a client's limits are counted against. An IPv6 client is
// counted by its /64 network: one subscriber gets a /64 (2^64 addresses), so
// counted per full address one machine could use a fresh address for every
// request and never meet a per-IP limit or spend its failed-credential budget.
// An IPv4-mapped IPv6 address (how a dual-stack listener reports an IPv4
// client: uWS writes 127.0.0.1 as 0000:…:ffff:7f00:0001) is the IPv4 address
// itself; grouped by /64 every IPv4 client would share one limit. Anything
// that is not an IP address (a proxy's "unknown", an address with a port) is
// counted as written.
import { isIPv4 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, or undefined when `s` is not one. */
function groupsOf(s: string): number[] | undefined {
  let text = s;
  // An embedded IPv4 tail (::ffff:1.2.3.4) as its two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return undefined;
    const [a, b, c, d] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string) => (h === '' ? [] : h.split(':'));
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  const given = left.length + right.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  const parts = [...left, ...Array<string>(8 - given).fill('0'), ...right];
  if (!parts.every((p) => /^[0-9a-f]{1,4}$/i.test(p))) return undefined;
  return parts.map((p) => parseInt(p, 16));
}

export function limitAddress(ip: string): string {
  if (isIPv4(ip) || !ip.includes(':')) return ip;
  const g = groupsOf(ip.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
  if (!g) return ip;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}
