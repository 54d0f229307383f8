// What a hub holds per host channel, by kind of object: a hub in a process of
// its own (bench/hub-child.ts) writes a heap snapshot, N raw hosts connect
// and say hello, and it writes another; the objects in the second that the
// first did not have are summed by type and constructor, per channel. RSS per
// channel (bench/hosts-cluster.ts) says how much; this says what.
//
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/heap-diff.ts        (BENCH_HEAP_HOSTS=5000; REDIS_URL: presence in Redis)
//   npx tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot 5000                        (two snapshots at hand;
//                                                                                                 BENCH_HEAP_KEEP=1 keeps the measured ones)
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { forkHub } from './hub-process.js';
import { connectRawHost, type RawHost } from './raw-host.js';
import { HOST_WS_PATH } from '../host-protocol/version.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Kind {
  kind: string;
  count: number;
  bytes: number;
}

/** What `after` holds more than `before` (both live sets, after a GC), by type and constructor; heaviest first. */
export function heapDiff(before: Snapshot, after: Snapshot): Kind[] {
  const kinds = new Map<string, Kind>();
  const add = (s: Snapshot, sign: number) => {
    const f = s.snapshot.meta.node_fields;
    const width = f.length, type = f.indexOf('type'), name = f.indexOf('name'), size = f.indexOf('self_size');
    const types = s.snapshot.meta.node_types[0];
    for (let i = 0; i < s.nodes.length; i += width) {
      const t = types[s.nodes[i + type]];
      // Strings and numbers by their type alone: their "names" are their values. (Totals, not ids: a
      // native object's id is not stable from one snapshot to the next.)
      const n = t === 'object' || t === 'closure' || t === 'array' || t === 'hidden' || t === 'native' ? s.strings[s.nodes[i + name]] : '';
      const kind = `${t}${n ? ` ${n.slice(0, 60)}` : ''}`;
      const k = kinds.get(kind) ?? { kind, count: 0, bytes: 0 };
      k.count += sign;
      k.bytes += sign * s.nodes[i + size];
      kinds.set(kind, k);
    }
  };
  add(after, 1);
  add(before, -1);
  return [...kinds.values()].filter((k) => k.bytes !== 0 || k.count !== 0).sort((x, y) => y.bytes - x.bytes);
}

function report(kinds: Kind[], channels: number, rows = 30): string {
  const total = kinds.reduce((s, k) => s + k.bytes, 0);
  const lines = [`Held more after ${channels} channels opened: ${(total / 2 ** 20).toFixed(2)} MB, ${(total / channels).toFixed(0)} bytes per channel (self sizes; a kind held less shows a negative figure).`, '',
    '| kind (type and constructor) | objects per channel | bytes per channel | share |', '|---|---:|---:|---:|'];
  for (const k of kinds.slice(0, rows)) lines.push(`| ${k.kind.replace(/\|/g, '\\|')} | ${(k.count / channels).toFixed(2)} | ${(k.bytes / channels).toFixed(1)} | ${((100 * k.bytes) / total).toFixed(1)} % |`);
  return lines.join('\n');
}

const load = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Snapshot;

async function measure(n: number): Promise<string> {
  const config = { ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {}), ...(process.env.REDIS_URL ? { redisUrl: process.env.REDIS_URL, redisPrefix: `heapdiff${process.pid}:` } : {}) };
  const hub = await forkHub({ nodeArgs: ['--expose-gc'], name: 'heap', config });
  const hosts: RawHost[] = [];
  try {
    const creds = await hub.seedHosts!(n);
    const dir = tmpdir();
    const beforePath = await hub.snapshot!(join(dir, `heap-diff-before-${process.pid}.heapsnapshot`));
    const ws = hub.url.replace(/^http/, 'ws') + HOST_WS_PATH;
    // 50 upgrades in flight, from a few loopback addresses (ephemeral ports per address).
    let next = 0;
    await Promise.all(Array.from({ length: 50 }, async (_, lane) => {
      for (let i = next++; i < n; i = next++) hosts.push(await connectRawHost(ws, creds[i], { heartbeat: false, localAddress: `127.0.0.${2 + (lane % 8)}` }));
    }));
    await new Promise((r) => setTimeout(r, 3000)); // batched writes and presence settle
    const afterPath = await hub.snapshot!(join(dir, `heap-diff-after-${process.pid}.heapsnapshot`));
    const out = report(heapDiff(load(beforePath), load(afterPath)), hosts.length);
    if (!process.env.BENCH_HEAP_KEEP) for (const p of [beforePath, afterPath]) rmSync(p, { force: true });
    else console.error(`snapshots kept: ${beforePath} ${afterPath}`);
    return out;
  } finally {
    for (const h of hosts) h.terminate();
    await hub.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [before, after, channels] = process.argv.slice(2);
  if (before && after) console.log(report(heapDiff(load(before), load(after)), Number(channels ?? 1)));
  else console.log(await measure(Number(process.env.BENCH_HEAP_HOSTS ?? 5000)));
  process.exit(0);
}
