// Bad input, measured (issue 14 part 7): generated and mutated requests across
// every route of a real in-process hub, and mutated MessagePack frames over a
// real host channel. Counts 5xx answers (by route), crashes (the hub stops
// answering /api/v1/health) and unhandled rejections in the hub's process.
//   FUZZ_REQUESTS=100000 FUZZ_FRAMES=100000 FUZZ_SEED=42 node --import tsx bench/fuzz.ts
// With DATABASE_URL set the hub uses a fresh PostgreSQL database, else PGlite.
// A failure prints its seed and request: rerun with that FUZZ_SEED to replay.
import WebSocket from 'ws';
import { encode } from '@msgpack/msgpack';
import { HostToHub, PROTOCOL_VERSION } from '../host-protocol/index.js';
import { encodeFrame } from '../host-protocol/index.js';
import { CloseCodes } from '../host-protocol/version.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { pairHost, wsUrl, CLAUDE_ENGINE } from '../test/helpers/host.js';

// ---------- seedable randomness ----------
export type Rng = () => number;
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const int = (r: Rng, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)];

// ---------- values ----------
const deep = (n: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
  return v;
};
const HOSTILE_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '../../etc/passwd', '..', '/', '%2F', '%00', '\ud800', '\udfff\ud800', '😀'.repeat(50), 'ﷺ', '\u202e', 'x'.repeat(300),
  '<script>', "'; drop table users; --", '${jndi}', '\r\nX-Injected: 1', 'null', 'true', '-1', '1e309', 'NaN', '__proto__', 'ahk_' + 'a'.repeat(48),
];
const HOSTILE_NUMBERS = [0, -1, -0, 0.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 64, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1e-320, 2147483648, -2147483649];
export function hostileValue(r: Rng): unknown {
  switch (int(r, 10)) {
    case 0: return pick(r, HOSTILE_STRINGS);
    case 1: return pick(r, HOSTILE_NUMBERS);
    case 2: return pick(r, [null, true, false, [], {}, [null], { '': '' }]);
    case 3: return deep(1 + int(r, pick(r, [10, 100, 2000])));
    case 4: return 'é'.repeat(pick(r, [1000, 20_000, 200_000]));
    case 5: return Array.from({ length: pick(r, [100, 10_000]) }, (_, i) => i);
    case 6: return JSON.parse('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'); // own keys, as JSON.parse makes them
    case 7: return String.fromCharCode(...Array.from({ length: 1 + int(r, 40) }, () => int(r, 0x10000)));
    case 8: return int(r, 2) ? 'a\u0000' : '\u0000'.repeat(10);
    default: return pick(r, HOSTILE_STRINGS) + pick(r, HOSTILE_STRINGS);
  }
}

/** A value that (mostly) satisfies a typebox / JSON schema. */
export function fromSchema(s: any, r: Rng, depth = 0): unknown {
  if (!s || depth > 8) return null;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return pick(r, s.enum);
  if (Array.isArray(s.anyOf)) return fromSchema(pick(r, s.anyOf), r, depth + 1);
  if (Array.isArray(s.oneOf)) return fromSchema(pick(r, s.oneOf), r, depth + 1);
  const type = Array.isArray(s.type) ? pick(r, s.type) : s.type;
  switch (type) {
    case 'string': {
      if (s.format === 'uri' || /url/i.test(s.title ?? '')) return 'https://example.com/x';
      const min = s.minLength ?? 0;
      const max = Math.min(s.maxLength ?? 20, min + 20);
      const len = min + int(r, Math.max(1, max - min + 1));
      return 'abcdefghij_-'.repeat(8).slice(0, len).padEnd(min, 'a');
    }
    case 'integer':
    case 'number': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
      const max = s.maximum ?? min + 100;
      const v = min + r() * Math.max(0, Math.min(max, min + 1000) - min);
      return type === 'integer' ? Math.floor(v) : v;
    }
    case 'boolean': return r() < 0.5;
    case 'null': return null;
    case 'array': {
      const n = (s.minItems ?? 0) + int(r, 3);
      return Array.from({ length: n }, () => fromSchema(s.items, r, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const req = new Set<string>(s.required ?? []);
      for (const [k, v] of Object.entries<any>(s.properties ?? {})) if (req.has(k) || r() < 0.5) out[k] = fromSchema(v, r, depth + 1);
      return out;
    }
    default: return 'x';
  }
}

/** Replaces, adds or removes one field somewhere in `v` (or `v` itself) with hostile input. */
export function mutate(v: unknown, r: Rng, depth = 0): unknown {
  if (v && typeof v === 'object' && depth < 6 && r() < 0.7) {
    const keys = Object.keys(v);
    const copy: any = Array.isArray(v) ? [...v] : { ...v };
    const roll = int(r, 10);
    // defineProperty: '__proto__' becomes an own key (as in parsed JSON), not the copy's prototype.
    if (roll === 0 || keys.length === 0) Object.defineProperty(copy, pick(r, ['extra', '__proto__', 'constructor', '', '\u0000', 'id', 'userId', 'role']), { value: hostileValue(r), enumerable: true, writable: true, configurable: true });
    else if (roll === 1) delete copy[pick(r, keys)];
    else {
      const k = pick(r, keys);
      copy[k] = mutate(copy[k], r, depth + 1);
    }
    return copy;
  }
  return hostileValue(r);
}

// ---------- requests ----------
interface RouteInfo { method: string; path: string; auth: string; query?: { schema: unknown }; body?: { schema: unknown }; rawBody?: boolean; doc?: { events?: string } }

const HOSTILE_IDS = ['/', '%2F', '..', '%2E%2E', '%00', 'a%00b', '%', '%zz', '%E2%80%AE', encodeURIComponent('é😀'), '%ED%A0%80', 'x'.repeat(201), 'x'.repeat(5000),
  'x_1', 'usr_' + 'a'.repeat(20), '-1', '0', '1e309', 'null', '%20', '%0A', '..%2F..%2Fetc', 'a/b', 'a%2Fb', '%5C', '~', encodeURIComponent("' or 1=1 --")];

export interface FuzzRequest { method: string; path: string; headers: Record<string, string>; body?: string; route: string; index?: number }

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes out as its raw UTF-8-ish escape. */
const enc = (v: string) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
};

export function makeRequest(routes: RouteInfo[], r: Rng, keys: { user: string; admin: string }): FuzzRequest {
  const route = pick(r, routes);
  const path = route.path.replace(/:(\w+)/g, () => (r() < 0.1 ? enc(pick(r, HOSTILE_STRINGS)) : pick(r, HOSTILE_IDS)));
  // Query: valid-ish from the schema, mutated; or raw junk.
  let qs = '';
  const qRoll = int(r, 4);
  if (route.query && qRoll < 2) {
    const q = fromSchema(route.query.schema, r) as Record<string, unknown>;
    const m = qRoll === 0 ? (mutate(q, r) as Record<string, unknown>) : q;
    if (m && typeof m === 'object') qs = new URLSearchParams(Object.entries(m).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v) ?? ''])).toString();
  } else if (qRoll === 2) {
    qs = pick(r, ['a=%zz', 'limit=1e309', 'limit=-1&limit=2', 'cursor=%00', 'offset=99999999999999999999', '=', '&&&', 'q=' + 'x'.repeat(5000), 'page=NaN', 'sort=__proto__', 'status=%ED%A0%80']);
  }
  const headers: Record<string, string> = {};
  const auth = int(r, 10);
  if (auth < 5) headers.authorization = `Bearer ${keys.user}`;
  else if (auth < 8) headers.authorization = `Bearer ${keys.admin}`;
  else if (auth === 8) headers.authorization = pick(r, ['Bearer ', 'Basic abc', 'Bearer ' + 'x'.repeat(5000), 'Bearer ahk_%00', 'bearer  ' + keys.user + ' x', 'Bearer eyJhbGciOiJub25lIn0.e30.']);
  if (r() < 0.2) headers['idempotency-key'] = pick(r, ['', 'k', 'x'.repeat(300), '\u00e9', '%00', '../a']);
  if (r() < 0.1) headers['last-event-id'] = pick(r, ['-1', 'abc', '1e309', '99999999999999999999', '0', '']);
  if (r() < 0.1) headers.accept = pick(r, ['text/event-stream', '*/*', 'application/xml', '']);
  let body: string | undefined;
  if (route.method !== 'GET' && route.method !== 'DELETE') {
    const valid = route.body ? fromSchema(route.body.schema, r) : {};
    const roll = int(r, 10);
    headers['content-type'] = 'application/json';
    if (roll < 2) body = JSON.stringify(valid);
    else if (roll < 7) body = JSON.stringify(mutate(valid, r)) ?? 'null';
    else if (roll === 7) body = JSON.stringify(valid).slice(0, int(r, JSON.stringify(valid).length));
    else if (roll === 8) {
      body = JSON.stringify(valid);
      headers['content-type'] = pick(r, ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/jsonx', '', 'multipart/form-data; boundary=x']);
    } else body = pick(r, ['', 'null', '[]', '"x"', '1e309', '{"a":' .repeat(5000), '\u0000', '{"__proto__":{"admin":true}}', '\ud800', '{"a":1,"a":2}']);
  }
  return { method: route.method, path: path + (qs ? '?' + qs : ''), headers, body, route: `${route.method} ${route.path}` };
}

// ---------- frames ----------
const mp = (v: unknown) => encode(v, { maxDepth: 5000 });
const TAGS = ['hello', 'run.init', 'run.delta', 'run.message', 'run.end', 'reply', 'ping', 'pong', 'engines', 'welcome', 'run.start', 'x', '', 'constructor', '__proto__'];
export function makeFrame(r: Rng): Uint8Array {
  const roll = int(r, 10);
  if (roll === 0) return Uint8Array.from({ length: int(r, 64) }, () => int(r, 256)); // random bytes
  if (roll === 1) return mp(hostileValue(r)); // a valid MessagePack value that is no frame
  if (roll === 2) return mp({ t: pick(r, TAGS), id: hostileValue(r), runId: hostileValue(r) });
  if (roll === 3) return mp({ t: 'engines', engines: Array.from({ length: pick(r, [51, 1000, 20_000]) }, () => CLAUDE_ENGINE) });
  const valid = fromSchema(HostToHub, r);
  const bytes = mp(roll < 6 ? valid : mutate(valid, r));
  if (roll === 9) return bytes.slice(0, int(r, bytes.length)); // truncated
  return bytes;
}

// ---------- the run ----------
export interface FuzzSummary {
  seed: number; requests: number; frames: number; status: Record<string, number>; fiveXX: Record<string, number>;
  examples: Array<{ req: FuzzRequest; status: number; text: string }>; crashes: number; rejections: number; uncaught: number;
  unexpectedCloses: Record<string, number>; reconnects: number; notConfigured: number; clientErrors: Record<string, number>; durationMs: number; timeouts: number;
}

export async function runFuzz(opts: { requests: number; frames: number; seed: number; concurrency?: number; hub?: TestHub; log?: (s: string) => void }): Promise<FuzzSummary> {
  const log = opts.log ?? (() => {});
  const rejections: unknown[] = [];
  const uncaught: unknown[] = [];
  const onRej = (e: unknown) => rejections.push(e);
  const onExc = (e: unknown) => uncaught.push(e);
  process.on('unhandledRejection', onRej);
  process.on('uncaughtException', onExc);
  const t = opts.hub ?? (await startTestHub({ hostConnectsPerMinute: 0 }));
  const t0 = performance.now();
  const s: FuzzSummary = { seed: opts.seed, requests: 0, frames: 0, status: {}, fiveXX: {}, examples: [], crashes: 0, rejections: 0, uncaught: 0, unexpectedCloses: {}, reconnects: 0, notConfigured: 0, clientErrors: {}, durationMs: 0, timeouts: 0 };
  try {
    const user = await t.user('fuzzer');
    const routes = (t.hub.routes as unknown as RouteInfo[]).filter((x) => x.path !== '/metrics');
    const keys = { user: user.key, admin: t.adminKey };
    const healthy = async () => {
      try {
        const h = await fetch(t.url + '/api/v1/health', { signal: AbortSignal.timeout(10_000) });
        return h.status === 200;
      } catch {
        return false;
      }
    };
    // Requests: one RNG per worker, seeded from the run's seed, so a run replays.
    const workers = opts.concurrency ?? 16;
    let next = 0;
    const work = async () => {
      while (next < opts.requests) {
        // Request i depends only on (seed, i): FUZZ_SEED replays it whatever the scheduling.
        const i = next++;
        const req = { ...makeRequest(routes, mulberry32(opts.seed * 1_000_003 + i), keys), index: i };
        const ctl = new AbortController();
        const timer = setTimeout(() => ctl.abort(), 10_000);
        try {
          const res = await fetch(t.url + req.path, { method: req.method, headers: req.headers, body: req.body, signal: ctl.signal });
          // Streams are cut once the status is known.
          const text = res.headers.get('content-type')?.includes('event-stream') ? (await res.body?.cancel(), '') : await res.text();
          s.status[res.status] = (s.status[res.status] ?? 0) + 1;
          // 503 5031 is the spec's answer for a feature this hub has not configured (OIDC, chat binding): not a fault.
          if (res.status === 503 && text.includes('"code":"5031"')) s.notConfigured++;
          else if (res.status >= 500) {
            s.fiveXX[req.route] = (s.fiveXX[req.route] ?? 0) + 1;
            if (s.examples.length < 40) s.examples.push({ req: { ...req, body: req.body?.slice(0, 300) }, status: res.status, text: text.slice(0, 300) });
          }
        } catch (e) {
          if (ctl.signal.aborted) s.timeouts++;
          else {
            // The client refused to send it (fetch rejects some headers): counted, not the hub's fault.
            const k = `client: ${(e as Error).cause ? String(((e as Error).cause as Error).message ?? (e as Error).cause).slice(0, 60) : (e as Error).message}`;
            s.clientErrors[k] = (s.clientErrors[k] ?? 0) + 1;
          }
        } finally {
          clearTimeout(timer);
        }
        s.requests++;
        if (s.requests % 5000 === 0) {
          if (!(await healthy())) s.crashes++;
          log(`requests ${s.requests} (${Math.round(s.requests / ((performance.now() - t0) / 1000))}/s)`);
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, () => work()));
    if (!(await healthy())) s.crashes++;

    // Frames: one host channel at a time; a bad frame closes it, the fuzzer reconnects.
    if (opts.frames > 0) {
      const { credential } = await pairHost(t, user.key, 'fuzz-host');
      const r = mulberry32(opts.seed ^ 0x5eed);
      const expected = new Set<number>(Object.values(CloseCodes).map((c) => c.code));
      const connect = () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(wsUrl(t.url), { headers: { authorization: `Bearer ${credential}` }, perMessageDeflate: false });
          ws.once('error', reject);
          ws.once('open', () => {
            ws.send(encodeFrame({ t: 'hello', v: PROTOCOL_VERSION, cli: 'fuzz', name: 'fuzz', capacity: 1, engines: [CLAUDE_ENGINE] }));
            resolve(ws);
          });
        });
      while (s.frames < opts.frames) {
        const ws = await connect();
        s.reconnects++;
        const closed = new Promise<number>((res) => ws.once('close', (code) => res(code)));
        let open = true;
        void closed.then(() => (open = false));
        // A burst of frames, then wait for the close or a quiet moment.
        for (let i = 0; i < 20 && open && s.frames < opts.frames; i++) {
          ws.send(makeFrame(r));
          s.frames++;
          if (i % 5 === 4) await new Promise((res) => setImmediate(res));
        }
        const code = await Promise.race([closed, new Promise<undefined>((res) => setTimeout(res, 20))]);
        if (code === undefined) {
          ws.close(1000);
          await closed;
        } else if (!expected.has(code)) s.unexpectedCloses[code] = (s.unexpectedCloses[code] ?? 0) + 1;
        if (s.frames % 5000 < 20) log(`frames ${s.frames} (${s.reconnects} channels)`);
      }
      if (!(await healthy())) s.crashes++;
    }
    // Give late rejections a moment to surface.
    await new Promise((res) => setTimeout(res, 200));
  } finally {
    s.durationMs = Math.round(performance.now() - t0);
    s.rejections = rejections.length;
    s.uncaught = uncaught.length;
    for (const e of [...rejections, ...uncaught].slice(0, 5)) log(`rejection/exception: ${(e as Error)?.stack ?? String(e)}`);
    process.off('unhandledRejection', onRej);
    process.off('uncaughtException', onExc);
    if (!opts.hub) await t.close();
  }
  return s;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const summary = await runFuzz({
    requests: Number(process.env.FUZZ_REQUESTS ?? 10_000),
    frames: Number(process.env.FUZZ_FRAMES ?? 10_000),
    seed,
    concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 16),
    log: (l) => console.error(l),
  });
  console.log(JSON.stringify({ database: process.env.DATABASE_URL ? 'postgresql' : 'pglite', ...summary }, null, 2));
  const bad = Object.keys(summary.fiveXX).length + summary.crashes + summary.rejections + summary.uncaught + Object.keys(summary.unexpectedCloses).length;
  process.exit(bad ? 1 : 0);
}
