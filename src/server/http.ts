// The one request wrapper. It owns: copying what is needed out of `req`
// before any await, onAborted, the bounded body reader, authentication,
// schema checks, corked writes, the envelope, and the mapping of thrown
// errors through the catalogue. No route touches `res`.
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';
import { ErrorCatalogue, HubError, fail } from '../errors.js';
import type { Logger } from '../log.js';
import { Router } from './router.js';
import type { Checker } from './schema.js';
import type { TSchema } from 'typebox';
import { envelope, isReply, type Reply } from './reply.js';
import { openEventStream, SseGauge, SSE_BUFFER_BYTES, type EventStream } from './sse.js';
import { readBody } from './body.js';
import { StreamSlots } from './stream-slots.js';
import { refuseNul } from './nul.js';
import { Cors } from './cors.js';
import { isBackendUnavailable } from './unavailable.js';

export type AuthMode = 'none' | 'optional' | 'user' | 'admin';

export interface Principal {
  userId: string;
  name: string;
  role: 'user' | 'admin';
  /** How the caller proved who they are; keyId is set for API keys. */
  via: 'key' | 'jwt';
  keyId?: string;
}

export interface Req<Q = any, B = any> {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Q;
  body: B;
  headers: Record<string, string>;
  ip: string;
  /** Present on 'user' and 'admin' routes; maybe on 'optional'. */
  principal: Principal | undefined;
  /** The bearer token as sent, for routes that authenticate themselves (hosts). */
  bearer: string | undefined;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /**
   * Runs `cb` once when the response is over, however it ends: answered, stream ended, handler
   * failed, or client gone (at once if it already is). Subscriptions made for the response are released here.
   */
  whenDone(cb: () => void): void;
  /** Takes one of the caller's stream slots until the response is over; throws STREAM_LIMIT (429) when none is left. */
  holdStream(): void;
  /** The body's bytes as received, on `rawBody` routes only (signed notifications are verified over exactly these bytes). */
  raw?: Buffer;
}

export interface StreamOptions {
  /** Bytes held for one slow SSE reader before it is dropped. */
  bufferBytes: number;
  /** Open streams per account (0: no cap). */
  maxPerAccount: number;
}

export interface Route<Q = any, B = any> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  auth: AuthMode;
  query?: Checker<Q>;
  body?: Checker<B>;
  /** An empty body is passed as `emptyBody` instead of failing JSON parsing. */
  emptyBody?: unknown;
  /** Overrides the global body limit for this route (bytes). */
  bodyLimit?: number;
  /** The handler gets the body as `req.raw` (bounded like any body, any Content-Type, not parsed); `body` must be unset. */
  rawBody?: boolean;
  /** Not counted against the rate limits (the `before` hook is skipped): /metrics. */
  unlimited?: boolean;
  /** The schema of the envelope's `data` on success (documentation: the OpenAPI document emits it). */
  data?: TSchema;
  /** What the OpenAPI document says beyond the schemas (see RouteDoc). */
  doc?: RouteDoc;
  handler: (req: Req<Q, B> & { principal: Principal }) => Promise<unknown> | unknown;
}

/** Documentation-only facts about a route's answers; nothing here changes how a request is served. */
export interface RouteDoc {
  summary?: string;
  /** The success status of the envelope (default 200). */
  status?: number;
  /** The plain (unenveloped) 202 body the route answers with when it queues or accepts work. */
  accepted?: TSchema;
  /** The route answers `text/event-stream` (always, or when asked with `Accept`). */
  events?: 'always' | 'on-accept';
  /** Request headers the route reads (Idempotency-Key, Last-Event-ID, …). */
  headers?: Array<{ name: string; description: string }>;
  /** A non-envelope answer (an HTML page, a provider acknowledgement, a redirect, the document itself). */
  raw?: { status: number; contentType?: string; description: string; schema?: TSchema };
}

export interface HttpHooks {
  /** `from` is where the request came from (failed checks are counted per client IP). */
  authenticate(token: string, from: Pick<Req, 'ip' | 'headers'>): Promise<Principal>;
  /** Runs before the handler (rate limits); may throw a HubError; headers it returns go on the reply. */
  before?(req: Req, route: Route): Promise<Record<string, string> | void> | Record<string, string> | void;
  /** Each SSE stream as it opens (a graceful shutdown ends them with a final frame). */
  streamOpened?(stream: EventStream): void;
  /** Each answered request (a stream: when it opens), by route template (undefined: no route matched); for metrics. */
  answered?(route: string | undefined, method: string, status: number, seconds: number): void;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 302: '302 Found',
  400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 502: '502 Bad Gateway', 503: '503 Service Unavailable', 504: '504 Gateway Timeout',
};
const statusLine = (s: number) => STATUS_TEXT[s] ?? `${s} Status`;

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

export class HttpApi {
  readonly router = new Router<Route>();
  /** Every route in declaration order: the OpenAPI document is generated from this list. */
  readonly routes: Route[] = [];
  private active = 0;
  /** Bytes held for slow SSE readers, all streams. */
  readonly sseGauge = new SseGauge();
  private readonly slots: StreamSlots;
  private openStreams = 0;
  constructor(
    private readonly hooks: HttpHooks,
    private readonly log: Logger,
    private readonly bodyLimit: number,
    private readonly streams: StreamOptions = { bufferBytes: SSE_BUFFER_BYTES, maxPerAccount: 0 },
    private readonly cors: Cors = new Cors([]),
  ) {
    this.slots = new StreamSlots(() => streams.maxPerAccount);
  }

  /** SSE streams open now. */
  get streamsOpen(): number {
    return this.openStreams;
  }

  private fallbackRoute: Route | undefined;
  /** Answers GET/HEAD of paths outside /api/ that match no route (the console's client-side routes). */
  fallback(r: Route): void {
    this.fallbackRoute = r;
  }

  /** A GET/HEAD outside /api/ that no route matched goes to the fallback; /api/* keeps its JSON 404. */
  private isFallback(e: unknown, method: string, path: string): boolean {
    return this.fallbackRoute !== undefined && e instanceof HubError && e.code === ErrorCatalogue.ROUTE_NOT_FOUND.code
      && (method === 'GET' || method === 'HEAD') && !/^\/api(\/|$)/.test(path);
  }

  route<Q, B>(r: Route<Q, B>): void {
    this.router.add(r.method, r.path, r as Route);
    this.routes.push(r as Route);
  }

  /** Requests whose handler has not finished (streams included), for a graceful shutdown. */
  get inFlight(): number {
    return this.active;
  }

  attach(app: TemplatedApp): void {
    app.any('/*', (res, req) => this.handle(res, req));
  }

  private handle(res: HttpResponse, uReq: HttpRequest): void {
    const t0 = performance.now();
    let template: string | undefined; // the route's registered path, once matched: never the raw URL
    const who: { id?: string } = {}; // the authenticated principal, for the access line
    // The one point every request is over (a stream: when it opens): metrics and the access line.
    // The line holds the route template, never the raw URL or query (ids and secrets stay out).
    const answered = (status: number) => {
      const ms = performance.now() - t0;
      this.hooks.answered?.(template, method, status, ms / 1000);
      this.log.debug('request', { method, route: template ?? null, status, ms: Math.round(ms * 10) / 10, principal: who.id ?? null });
    };
    // Copy everything out of uReq now: it is invalid after this callback returns.
    const method = uReq.getMethod().toUpperCase();
    const path = uReq.getUrl();
    const rawQuery = uReq.getQuery() ?? '';
    const headers: Record<string, string> = {};
    uReq.forEach((k, v) => {
      headers[k] = v;
    });
    const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
    const corsHeaders = this.cors.answer(headers['origin']);
    // Made only when a handler reads `signal` (most never do): one controller per request costs on the read path.
    let ctl: AbortController | undefined;
    let clientGone = false;
    const signal = () => {
      if (!ctl) {
        ctl = new AbortController();
        if (clientGone) ctl.abort();
      }
      return ctl.signal;
    };
    let done = false;
    const abortCbs: Array<() => void> = [];
    // Finalizers of the request (whenDone): run once, when the client leaves or the handler is over.
    let over = false;
    const finals: Array<() => void> = [];
    const runFinals = () => {
      over = true;
      for (const cb of finals.splice(0)) {
        try {
          cb();
        } catch (e) {
          this.log.warn('request finalizer failed', { err: e });
        }
      }
    };
    const whenDone = (cb: () => void) => {
      if (over) cb();
      else finals.push(cb);
    };
    res.onAborted(() => {
      done = true;
      clientGone = true;
      ctl?.abort();
      for (const cb of abortCbs.splice(0)) cb();
      runFinals();
    });
    const send = (status: number, body: string | undefined, extra?: Record<string, string>, contentType = 'application/json', closeConnection = false) => {
      if (done) return;
      done = true;
      const all = corsHeaders ? { ...corsHeaders, ...extra } : extra;
      res.cork(() => {
        res.writeStatus(statusLine(status));
        if (body !== undefined) res.writeHeader('Content-Type', contentType);
        if (all) for (const k in all) res.writeHeader(k, all[k]);
        if (body === undefined) res.endWithoutBody(0, closeConnection);
        else res.end(body, closeConnection);
      });
      answered(status);
    };
    const sendError = (e: unknown) => {
      if (e instanceof HubError) {
        const h = e.status === 401 && !e.headers?.['WWW-Authenticate'] ? { ...e.headers, 'WWW-Authenticate': bearerChallenge(e, headers['authorization']) } : e.headers;
        send(e.status, JSON.stringify({ code: e.code, message: e.message, data: null }), h);
      } else if (isBackendUnavailable(e)) {
        // An outage, not a bug: retry later. Logged without the error's text (a query's values may be in it).
        this.log.warn('database or redis unavailable', { method, route: template ?? null, code: (e as { code?: string }).code ?? null });
        const u = ErrorCatalogue.UNAVAILABLE;
        send(u.status, JSON.stringify({ code: u.code, message: u.message, data: null }));
      } else {
        this.log.error('unhandled error', { method, route: template ?? null, err: e }); // the template: a raw path may hold a token (/invites/:token)
        const i = ErrorCatalogue.INTERNAL;
        send(500, JSON.stringify({ code: i.code, message: i.message, data: null }));
      }
    };

    // A preflight (or any OPTIONS) is answered here: no authentication (browsers send none with it), no handler.
    if (method === 'OPTIONS') {
      try {
        const allow = this.router.allowed(path);
        return send(204, undefined, { Allow: allow.join(', '), ...this.cors.preflight(headers['origin'], allow.filter((m) => m !== 'HEAD')) });
      } catch (e) {
        return sendError(e);
      }
    }

    let match;
    try {
      match = this.router.find(method, path);
    } catch (e) {
      // Drain nothing: uWS discards an unread body when we answer.
      if (!this.isFallback(e, method, path)) return sendError(e);
      match = { route: this.fallbackRoute!, params: {} };
    }
    const route = match.route;
    template = route.path;
    const limit = route.bodyLimit ?? this.bodyLimit;

    const run = (raw: Buffer | undefined) => {
      this.active++;
      const ctx = { method, path, rawQuery, headers, ip, params: match!.params, raw, get signal() { return signal(); }, whenDone, who, corsHeaders };
      this.process(route, ctx, res, () => done, (cb) => abortCbs.push(cb), send, () => {
        done = true;
        answered(200);
      })
        .catch(sendError)
        .finally(() => {
          this.active--;
          runFinals();
        });
    };

    if (!BODY_METHODS.has(method)) return run(undefined);
    const declared = headers['content-length'] === undefined ? NaN : Number(headers['content-length']);
    readBody(res, limit, declared, {
      done: run,
      tooLarge: (close) => {
        const body = JSON.stringify({ code: ErrorCatalogue.PAYLOAD_TOO_LARGE.code, message: `body exceeds ${limit} bytes`, data: null });
        send(413, body, close ? { Connection: 'close' } : undefined, 'application/json', close);
      },
      finished: () => done,
    });
  }

  private async process(
    route: Route,
    r: { method: string; path: string; rawQuery: string; headers: Record<string, string>; ip: string; params: Record<string, string>; raw: Buffer | undefined; signal: AbortSignal; whenDone: (cb: () => void) => void; who: { id?: string }; corsHeaders: Record<string, string> | undefined },
    res: HttpResponse,
    isDone: () => boolean,
    onAbort: (cb: () => void) => void,
    send: (status: number, body: string | undefined, extra?: Record<string, string>, contentType?: string) => void,
    markStreaming: () => void,
  ): Promise<void> {
    const auth = r.headers['authorization'];
    const bearer = auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : undefined;
    let principal: Principal | undefined;
    if (route.auth !== 'none') {
      if (bearer) principal = await this.hooks.authenticate(bearer, r);
      else if (auth && route.auth !== 'optional') throw fail('UNAUTHENTICATED', 'Authorization must be "Bearer <token>"');
      if (!principal && route.auth !== 'optional') throw fail('UNAUTHENTICATED');
      r.who.id = principal?.userId;
      if (route.auth === 'admin' && principal!.role !== 'admin') throw fail('ADMIN_ONLY');
    }

    const rawQuery = parseQuery(r.rawQuery);
    refuseNul(rawQuery, 'query');
    const query = route.query ? route.query.parse(rawQuery, 'query') : rawQuery;
    let body: unknown = undefined;
    if (route.body) {
      const raw = r.raw;
      if (!raw || raw.length === 0) {
        if (route.emptyBody !== undefined) body = route.emptyBody;
        else throw fail('VALIDATION', 'request body is required');
      } else {
        const ct = (r.headers['content-type'] ?? '').toLowerCase();
        if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/.test(ct)) throw fail('BAD_CONTENT_TYPE');
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw fail('BAD_JSON');
        }
        refuseNul(body, 'body');
      }
      body = route.body.parse(body, 'body');
    }
    const holdStream = () => {
      const release = this.slots.acquire(principal?.userId ?? `ip:${r.ip}`);
      r.whenDone(release);
    };
    const req: Req = { method: r.method, path: r.path, params: r.params, query, body, headers: r.headers, ip: r.ip, principal, bearer, get signal() { return r.signal; }, whenDone: r.whenDone, holdStream };
    if (route.rawBody) req.raw = r.raw ?? Buffer.alloc(0);
    const hookHeaders = this.hooks.before && !route.unlimited ? (await this.hooks.before(req, route)) || undefined : undefined;
    const out = await route.handler(req as Req & { principal: Principal });
    if (isDone()) return;
    const withHooks = (h?: Record<string, string>) => (hookHeaders ? { ...hookHeaders, ...h } : h);
    const reply: Reply = isReply(out) ? out : { kind: 'envelope', status: 200, data: out ?? null };
    switch (reply.kind) {
      case 'envelope':
        return send(reply.status, JSON.stringify(envelope(reply.data)), withHooks(reply.headers));
      case 'envelope-json':
        return send(reply.status, `{"code":"0","message":"ok","data":${reply.dataJson}}`, withHooks());
      case 'plain':
        return send(reply.status, JSON.stringify(reply.body), withHooks(reply.headers));
      case 'text':
        return send(reply.status, reply.body, withHooks(reply.headers), reply.contentType);
      case 'empty':
        return send(reply.status, undefined, withHooks(reply.headers));
      case 'redirect':
        return send(reply.status, undefined, { Location: reply.location });
      case 'stream': {
        markStreaming();
        const s = openEventStream(res, () => r.signal.aborted, onAbort, { bufferBytes: this.streams.bufferBytes, gauge: this.sseGauge, headers: r.corsHeaders });
        this.openStreams++;
        r.whenDone(() => {
          this.openStreams--;
          s.end(); // a start that failed or returned early leaves no stream open
        });
        this.hooks.streamOpened?.(s);
        await reply.start(s);
        return;
      }
    }
  }
}

/**
 * The `WWW-Authenticate` of a 401 (RFC 6750): the bare challenge when no credential came,
 * `invalid_request` for an Authorization header that is not a bearer, `invalid_token` for a refused one.
 */
function bearerChallenge(e: HubError, authorization: string | undefined): string {
  const realm = 'Bearer realm="agent-hub"';
  if (!authorization) return realm;
  if (!/^bearer\s+\S/i.test(authorization)) return `${realm}, error="invalid_request"`;
  return e.kind === 'TOKEN_EXPIRED' ? `${realm}, error="invalid_token", error_description="token expired"` : `${realm}, error="invalid_token"`;
}

export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
  return out;
}
