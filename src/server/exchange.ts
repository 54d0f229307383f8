// One HTTP request through the wrapper, as one object: what was copied out of
// uWS's request, the response's state, and the steps from authentication to
// the answer as methods. A step that can answer at once (a cached key, a warm
// catalog) runs synchronously, so a warm read costs no promise, no microtask
// and no closure per step; a step that returns a promise continues after it.
import type { HttpRequest, HttpResponse } from './uws.js';
import { ErrorCatalogue, HubError, fail } from '../errors.js';
import type { HttpApi, Principal, Req, Route } from './http.js';
import { envelope, isReply, type Reply } from './reply.js';
import { openEventStream } from './sse.js';
import { readBody } from './body.js';
import { refuseBadText } from './text-rules.js';
import { deepFreeze } from './schema.js';
import { isBackendUnavailable } from './unavailable.js';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 302: '302 Found',
  400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 502: '502 Bad Gateway', 503: '503 Service Unavailable', 504: '504 Gateway Timeout',
};
const statusLine = (s: number) => STATUS_TEXT[s] ?? `${s} Status`;

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);
const BEARER = /^bearer\s+/i;
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/;
/** Distinct raw query strings remembered per route (then forgotten at once: a bound, not an LRU). */
const QUERY_MEMO_MAX = 1000;

export class Exchange {
  private readonly t0 = performance.now();
  readonly method: string;
  readonly path: string;
  private readonly rawQuery: string;
  readonly headers: Record<string, string> = {};
  private readonly corsHeaders: Record<string, string> | undefined;
  private ipText: string | undefined;
  /** The route's registered path, once matched: never the raw URL (metrics and the access line). */
  private template: string | undefined;
  /** The authenticated principal's id, for the access line. */
  private whoId: string | undefined;
  private route!: Route;
  private params: Record<string, string> = {};
  private raw: Buffer | undefined;
  private principal: Principal | undefined;
  private req!: Req;
  private hookHeaders: Record<string, string> | undefined;
  /** Made only when a handler reads `signal` (most never do). */
  private ctl: AbortController | undefined;
  private clientGone = false;
  /** Answered or aborted: nothing more may be written. */
  private finished = false;
  /** The request's finalizers (whenDone) have run. */
  private over = false;
  private abortCbs: Array<() => void> | undefined;
  private finals: Array<() => void> | undefined;

  constructor(
    private readonly api: HttpApi,
    private readonly res: HttpResponse,
    uReq: HttpRequest,
  ) {
    // Copy everything out of uReq now: it is invalid after this callback returns.
    this.method = uReq.getMethod().toUpperCase();
    this.path = uReq.getUrl();
    this.rawQuery = uReq.getQuery() ?? '';
    uReq.forEach((k, v) => {
      this.headers[k] = v;
    });
    this.corsHeaders = api.cors.answer(this.headers['origin']);
    res.onAborted(() => this.aborted());
  }

  /**
   * The socket's address, read on first use (formatting it costs on every request, and most need
   * it only for a limit). Read while the response is live; after it ended there is none to read.
   */
  get ip(): string {
    if (this.ipText === undefined) this.ipText = this.finished ? '' : Buffer.from(this.res.getRemoteAddressAsText()).toString();
    return this.ipText;
  }

  get signal(): AbortSignal {
    if (!this.ctl) {
      this.ctl = new AbortController();
      if (this.clientGone) this.ctl.abort();
    }
    return this.ctl.signal;
  }

  whenDone(cb: () => void): void {
    if (this.over) cb();
    else (this.finals ??= []).push(cb);
  }

  holdStream(): void {
    this.whenDone(this.api.slots.acquire(this.principal?.userId ?? `ip:${this.ip}`));
  }

  start(): void {
    // A preflight (or any OPTIONS) is answered here: no authentication (browsers send none with it), no handler.
    if (this.method === 'OPTIONS') {
      try {
        const allow = this.api.router.allowed(this.path);
        return this.send(204, undefined, { Allow: allow.join(', '), ...this.api.cors.preflight(this.headers['origin'], allow.filter((m) => m !== 'HEAD')) });
      } catch (e) {
        return this.sendError(e);
      }
    }
    try {
      const match = this.api.router.find(this.method, this.path);
      this.route = match.route;
      this.params = match.params;
    } catch (e) {
      // Drain nothing: uWS discards an unread body when we answer.
      if (!this.api.isFallback(e, this.method, this.path)) return this.sendError(e);
      this.route = this.api.fallbackRoute!;
    }
    this.template = this.route.path;
    if (!BODY_METHODS.has(this.method)) return this.run(undefined);
    const limit = this.route.bodyLimit ?? this.api.bodyLimit;
    const cl = this.headers['content-length'];
    readBody(this.res, limit, cl === undefined ? NaN : Number(cl), {
      done: (raw) => this.run(raw),
      tooLarge: (close) => {
        const body = JSON.stringify({ code: ErrorCatalogue.PAYLOAD_TOO_LARGE.code, message: `body exceeds ${limit} bytes`, data: null });
        this.send(413, body, close ? { Connection: 'close' } : undefined, 'application/json', close);
      },
      finished: () => this.finished,
    });
  }

  /** The steps, synchronously as far as they go; the finalizers run once they are all over. */
  private run(raw: Buffer | undefined): void {
    this.api.active++;
    this.raw = raw;
    let pending: void | Promise<void> = undefined;
    try {
      pending = this.authenticate();
    } catch (e) {
      this.sendError(e);
    }
    if (pending instanceof Promise) {
      pending.catch((e: unknown) => this.sendError(e)).finally(() => this.settled());
    } else this.settled();
  }

  private settled(): void {
    this.api.active--;
    this.runFinals();
  }

  private authenticate(): void | Promise<void> {
    const route = this.route;
    const auth = this.headers['authorization'];
    const bearer = auth && BEARER.test(auth) ? auth.replace(BEARER, '').trim() : undefined;
    if (route.auth === 'none') return this.prepare(undefined, bearer);
    if (bearer) {
      const p = this.api.hooks.authenticate(bearer, this);
      if (!(p instanceof Promise)) return this.prepare(p, bearer);
      // The per-IP limits come after a slow check: the address is read now, while the request is surely open.
      void this.ip;
      return p.then((principal) => this.prepare(principal, bearer));
    }
    if (auth && route.auth !== 'optional') throw fail('UNAUTHENTICATED', 'Authorization must be "Bearer <token>"');
    return this.prepare(undefined, bearer);
  }

  /** Authorization, then the query and the body checked against the route's schemas, then the `before` hook. */
  private prepare(principal: Principal | undefined, bearer: string | undefined): void | Promise<void> {
    const route = this.route;
    if (route.auth !== 'none') {
      if (!principal && route.auth !== 'optional') throw fail('UNAUTHENTICATED');
      this.whoId = principal?.userId;
      if (route.auth === 'admin' && principal!.role !== 'admin') throw fail('ADMIN_ONLY');
    }
    this.principal = principal;
    const query = this.query(route);
    let body: unknown = undefined;
    if (route.body) {
      const raw = this.raw;
      if (!raw || raw.length === 0) {
        if (route.emptyBody !== undefined) body = route.emptyBody;
        else throw fail('VALIDATION', 'request body is required');
      } else {
        const ct = (this.headers['content-type'] ?? '').toLowerCase();
        if (!JSON_TYPE.test(ct)) throw fail('BAD_CONTENT_TYPE');
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw fail('BAD_JSON');
        }
        refuseBadText(body, 'body');
      }
      body = route.body.parse(body, 'body');
    }
    const req = new HandlerReq(this, this.params, query, body, principal, bearer);
    if (route.rawBody) req.raw = this.raw ?? Buffer.alloc(0);
    this.req = req;
    const before = this.api.hooks.before && !route.unlimited ? this.api.hooks.before(req, route) : undefined;
    return before instanceof Promise ? before.then((h) => this.handle(h || undefined)) : this.handle(before || undefined);
  }

  /** The query parsed and checked; by the raw string from the route's memo when it keeps one (a refused query is never kept). */
  private query(route: Route): unknown {
    const memo = route.query?.byRaw;
    const hit = memo?.get(this.rawQuery);
    if (hit !== undefined) return hit;
    const raw = parseQuery(this.rawQuery);
    refuseBadText(raw, 'query');
    if (!route.query) return raw;
    const query = route.query.parse(raw, 'query');
    if (memo) {
      if (memo.size >= QUERY_MEMO_MAX) memo.clear();
      memo.set(this.rawQuery, deepFreeze(query));
    }
    return query;
  }

  private handle(hookHeaders: Record<string, string> | undefined): void | Promise<void> {
    this.hookHeaders = hookHeaders;
    const out = this.route.handler(this.req as Req & { principal: Principal });
    return out instanceof Promise ? out.then((o) => this.reply(o)) : this.reply(out);
  }

  private withHooks(h?: Record<string, string>): Record<string, string> | undefined {
    return this.hookHeaders ? { ...this.hookHeaders, ...h } : h;
  }

  private reply(out: unknown): void | Promise<void> {
    if (this.finished) return;
    const reply: Reply = isReply(out) ? out : { kind: 'envelope', status: 200, data: out ?? null };
    switch (reply.kind) {
      case 'envelope':
        return this.send(reply.status, JSON.stringify(envelope(reply.data)), this.withHooks(reply.headers));
      case 'envelope-bytes':
        return this.send(reply.status, reply.body, this.withHooks());
      case 'envelope-json':
        return this.send(reply.status, `{"code":"0","message":"ok","data":${reply.dataJson}}`, this.withHooks());
      case 'plain':
        return this.send(reply.status, JSON.stringify(reply.body), this.withHooks(reply.headers));
      case 'text':
        return this.send(reply.status, reply.body, this.withHooks(reply.headers), reply.contentType);
      case 'empty':
        return this.send(reply.status, undefined, this.withHooks(reply.headers));
      case 'redirect':
        return this.send(reply.status, undefined, { Location: reply.location });
      case 'stream':
        // A HEAD is answered as the stream would be, without one: nothing follows the head of a HEAD's answer.
        if (this.method === 'HEAD') return this.send(200, undefined, this.withHooks({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' }));
        return this.openStream(reply.start);
    }
  }

  private async openStream(start: Extract<Reply, { kind: 'stream' }>['start']): Promise<void> {
    this.finished = true;
    this.answered(200);
    const api = this.api;
    const s = openEventStream(this.res, () => this.clientGone, (cb) => (this.abortCbs ??= []).push(cb), { bufferBytes: api.streams.bufferBytes, gauge: api.sseGauge, headers: this.corsHeaders });
    api.streamOpenedCount(1);
    this.whenDone(() => {
      api.streamOpenedCount(-1);
      s.end(); // a start that failed or returned early leaves no stream open
    });
    api.hooks.streamOpened?.(s, this.principal);
    await start(s);
  }

  private send(status: number, body: string | Buffer | undefined, extra?: Record<string, string>, contentType = 'application/json', closeConnection = false): void {
    if (this.finished) return;
    this.finished = true;
    const all = this.corsHeaders ? { ...this.corsHeaders, ...extra } : extra;
    const res = this.res;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      if (body !== undefined) res.writeHeader('Content-Type', contentType);
      if (all) for (const k in all) res.writeHeader(k, all[k]);
      if (body === undefined) res.endWithoutBody(0, closeConnection);
      // HEAD: the GET's length, no content (bytes after the head were read as the next answer on the connection).
      else if (this.method === 'HEAD') res.endWithoutBody(Buffer.byteLength(body), closeConnection);
      else res.end(body, closeConnection);
    });
    this.answered(status);
  }

  /** The one point every request is over (a stream: when it opens): metrics and the access line. */
  private answered(status: number): void {
    const ms = performance.now() - this.t0;
    this.api.hooks.answered?.(this.template, this.method, status, ms / 1000);
    // The line holds the route template, never the raw URL or query (ids and secrets stay out).
    const log = this.api.log;
    if (log.enabled?.('debug') !== false) log.debug('request', { method: this.method, route: this.template ?? null, status, ms: Math.round(ms * 10) / 10, principal: this.whoId ?? null });
  }

  private sendError(e: unknown): void {
    const log = this.api.log;
    if (e instanceof HubError) {
      const h = e.status === 401 && !e.headers?.['WWW-Authenticate'] ? { ...e.headers, 'WWW-Authenticate': bearerChallenge(e, this.headers['authorization']) } : e.headers;
      this.send(e.status, JSON.stringify({ code: e.code, message: e.message, data: null }), h);
    } else if (isBackendUnavailable(e)) {
      // An outage, not a bug: retry later. Logged without the error's text (a query's values may be in it).
      log.warn('database or redis unavailable', { method: this.method, route: this.template ?? null, code: (e as { code?: string }).code ?? null });
      const u = ErrorCatalogue.UNAVAILABLE;
      this.send(u.status, JSON.stringify({ code: u.code, message: u.message, data: null }));
    } else {
      log.error('unhandled error', { method: this.method, route: this.template ?? null, err: e }); // the template: a raw path may hold a token (/invites/:token)
      const i = ErrorCatalogue.INTERNAL;
      this.send(500, JSON.stringify({ code: i.code, message: i.message, data: null }));
    }
  }

  private aborted(): void {
    this.finished = true;
    this.clientGone = true;
    this.ctl?.abort();
    if (this.abortCbs) for (const cb of this.abortCbs.splice(0)) cb();
    this.runFinals();
  }

  /** Finalizers of the request (whenDone): run once, when the client leaves or the handler is over. */
  private runFinals(): void {
    this.over = true;
    if (!this.finals) return;
    for (const cb of this.finals.splice(0)) {
      try {
        cb();
      } catch (e) {
        this.api.log.warn('request finalizer failed', { err: e });
      }
    }
  }
}

/** What a handler sees: the checked request, with the exchange behind its live parts. */
class HandlerReq implements Req {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  declare raw?: Buffer;
  constructor(
    private readonly x: Exchange,
    readonly params: Record<string, string>,
    readonly query: any,
    readonly body: any,
    readonly principal: Principal | undefined,
    readonly bearer: string | undefined,
  ) {
    this.method = x.method;
    this.path = x.path;
    this.headers = x.headers;
  }
  get ip(): string {
    return this.x.ip;
  }
  get signal(): AbortSignal {
    return this.x.signal;
  }
  whenDone(cb: () => void): void {
    this.x.whenDone(cb);
  }
  holdStream(): void {
    this.x.holdStream();
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
