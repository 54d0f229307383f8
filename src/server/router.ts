// A segment trie for /api/v1. Path segments are percent-decoded one at a time,
// so an id containing "/" travels as %2F inside a single segment. Static
// segments win over parameters (/agents/mine before /agents/:id).
import { fail } from '../errors.js';

/** Longest path parameter accepted (every id the hub makes is far shorter; the spec's longest is 120). */
const PARAM_MAX = 200;

export interface Match<R> {
  route: R;
  params: Record<string, string>;
}

interface Node<R> {
  statics: Map<string, Node<R>>;
  param?: { name: string; node: Node<R> };
  methods: Map<string, R>;
}

const newNode = <R>(): Node<R> => ({ statics: new Map(), methods: new Map() });

function allowOf(node: Node<unknown>): string[] {
  const m = [...node.methods.keys()];
  if (m.includes('GET')) m.push('HEAD');
  return [...m, 'OPTIONS'];
}

export class Router<R> {
  private root = newNode<R>();

  add(method: string, path: string, route: R): void {
    let node = this.root;
    for (const seg of path.split('/').filter(Boolean)) {
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        if (node.param && node.param.name !== name) throw new Error(`route ${path}: param :${name} conflicts with :${node.param.name}`);
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.methods.has(method)) throw new Error(`route ${method} ${path} declared twice`);
    node.methods.set(method, route);
  }

  /** Returns the match, or throws ROUTE_NOT_FOUND / METHOD_NOT_ALLOWED (with `Allow`). */
  find(method: string, rawPath: string): Match<R> {
    const { node, params } = this.at(rawPath);
    const route = node.methods.get(method) ?? (method === 'HEAD' ? node.methods.get('GET') : undefined);
    if (!route) {
      const allow = allowOf(node);
      throw fail('METHOD_NOT_ALLOWED', `${method} is not allowed here; allowed: ${allow.join(', ')}`, { Allow: allow.join(', ') });
    }
    return { route, params };
  }

  /** The methods a path answers (HEAD with GET, OPTIONS always: the `Allow` list), or throws ROUTE_NOT_FOUND. */
  allowed(rawPath: string): string[] {
    return allowOf(this.at(rawPath).node);
  }

  private at(rawPath: string): { node: Node<R>; params: Record<string, string> } {
    const segs = rawPath.split('/').filter(Boolean);
    const params: Record<string, string> = {};
    const node = this.walk(this.root, segs, 0, params);
    if (!node || node.methods.size === 0) throw fail('ROUTE_NOT_FOUND', `no endpoint at ${rawPath.slice(0, 200)}`);
    return { node, params };
  }

  private walk(node: Node<R>, segs: string[], i: number, params: Record<string, string>): Node<R> | undefined {
    if (i === segs.length) return node;
    const raw = segs[i];
    const s = node.statics.get(raw);
    if (s) {
      const found = this.walk(s, segs, i + 1, params);
      if (found && found.methods.size) return found;
    }
    if (node.param) {
      let value: string;
      try {
        value = decodeURIComponent(raw);
      } catch {
        throw fail('BAD_PATH', 'malformed percent-encoding in path');
      }
      // No id holds a control character (PostgreSQL refuses NUL outright) or runs this long: refuse before any query.
      if (/[\u0000-\u001f\u007f]/.test(value)) throw fail('BAD_PATH', `path parameter ${node.param.name} holds a control character`);
      if (value.length > PARAM_MAX) throw fail('BAD_PATH', `path parameter ${node.param.name} is longer than ${PARAM_MAX} characters`);
      const found = this.walk(node.param.node, segs, i + 1, params);
      if (found && found.methods.size) {
        params[node.param.name] = value;
        return found;
      }
    }
    return undefined;
  }
}
