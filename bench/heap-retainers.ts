// Who keeps objects of one shape alive: reads a heap snapshot (bench/hub-child.ts's
// BENCH_HUB_SNAPSHOT, taken under load), finds the objects that have every named
// property, and sums the paths that retain them (nearest retainer first, weak edges
// left out) — what keeps, say, a run's state after its run has ended.
//
//   npx tsx bench/heap-retainers.ts hub.heapsnapshot toolSeq,rowEvents [depth=6] [top=15] [field=closed]
//
// `field`: a property whose value is shown per path (a boolean or a small string), e.g. whether the run is closed.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export function retainers(file: string, props: string[], depth = 6, top = 15, field?: string): string {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { node_fields: nf, node_types: [nodeTypes], edge_fields: ef, edge_types: [edgeTypes] } = s.snapshot.meta;
  const NF = nf.length;
  const EF = ef.length;
  const [nType, nName, nEdges, nSize] = ['type', 'name', 'edge_count', 'self_size'].map((f) => nf.indexOf(f));
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  const count = s.nodes.length / NF;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += s.nodes[i * NF + nEdges] * EF;
  }
  firstEdge[count] = s.edges.length;
  const weak = edgeTypes.indexOf('weak');
  const elementLike = new Set(['element', 'hidden'].map((t) => edgeTypes.indexOf(t)));
  const edgeName = (e: number) => (elementLike.has(s.edges[e + eType]) ? `[${s.edges[e + eName]}]` : s.strings[s.edges[e + eName]]);
  // Retainers of every node (weak edges aside): parallel arrays, built once.
  const from: number[][] = Array.from({ length: count }, () => []);
  const via: number[][] = Array.from({ length: count }, () => []);
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += EF) {
      if (s.edges[e + eType] === weak) continue;
      const to = s.edges[e + eTo] / NF;
      from[to].push(i);
      via[to].push(e);
    }
  }
  const label = (i: number) => `${nodeTypes[s.nodes[i * NF + nType]]}:${s.strings[s.nodes[i * NF + nName]].slice(0, 40)}`;
  const propsOf = (i: number) => {
    const m = new Map<string, number>();
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += EF) m.set(edgeName(e), s.edges[e + eTo] / NF);
    return m;
  };
  const matches: number[] = [];
  for (let i = 0; i < count; i++) {
    if (nodeTypes[s.nodes[i * NF + nType]] !== 'object') continue;
    const p = propsOf(i);
    if (props.every((x) => p.has(x))) matches.push(i);
  }
  // Each object's retaining path: the first retainer at each step that is not already on the path.
  const paths = new Map<string, number>();
  let bytes = 0;
  for (const i of matches) {
    bytes += s.nodes[i * NF + nSize];
    const parts: string[] = [];
    if (field) {
      const v = propsOf(i).get(field);
      parts.push(`${field}=${v === undefined ? '-' : s.strings[s.nodes[v * NF + nName]]}`);
    }
    const seen = new Set([i]);
    let at = i;
    for (let d = 0; d < depth; d++) {
      const k = from[at].findIndex((r) => !seen.has(r));
      if (k < 0) {
        parts.push('(none)');
        break;
      }
      const r = from[at][k];
      parts.push(`${edgeName(via[at][k])} ← ${label(r)}`);
      seen.add(r);
      at = r;
    }
    const key = parts.join('\n    ');
    paths.set(key, (paths.get(key) ?? 0) + 1);
  }
  const out = [`${matches.length} objects with ${props.join(', ')} (${bytes} bytes, self sizes)`];
  for (const [p, n] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${n} ×\n    ${p}`);
  return out.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, props, depth, top, field] = process.argv.slice(2);
  if (!file || !props) {
    console.error('usage: npx tsx bench/heap-retainers.ts file.heapsnapshot prop1,prop2 [depth] [top] [field]');
    process.exit(2);
  }
  console.log(retainers(file, props.split(','), Number(depth ?? 6), Number(top ?? 15), field));
}
