// The one request wrapper. It owns: copying what is needed out of `req`
// before any await, onAborted, the bounded body reader, authentication,
// schema checks, corked writes, the envelope, and the mapping of thrown
// errors through the catalogue. No route touches `res`. This file holds the
// route table and the types; each request is one Exchange (exchange.ts).
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';
import { ErrorCatalogue, HubError } from '../errors.js';
import type { Logger } from '../log.js';
import { Router } from './router.js';
import type { Checker } from './schema.js';
import type { TSchema } from 'typebox';
import { SseGauge, SSE_BUFFER_BYTES, type EventStream } from './sse.js';
import { StreamSlots } from './stream-slots.js';
import { Cors } from './cors.js';
import { Exchange } from './exchange.js';

export type AuthMode = 'none' | 'optional' | 'user' | 'admin';

export interface Principal {
  userId: string;
  name: string;
  role: 'user' | 'admin';
  /** How the caller proved who they are; keyId is set for API keys. */
  via: 'key' | 'jwt';
  keyId?: string;
  /** The credential itself, as `k:<key hash>` or `s:<sign-in id>`: a stream it opened ends when it is revoked. */
  credential?: string;
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
  authenticate(token: string, from: Pick<Req, 'ip' | 'headers'>): Principal | Promise<Principal>;
  /** Runs before the handler (rate limits); may throw a HubError; headers it returns go on the reply. */
  before?(req: Req, route: Route): Promise<Record<string, string> | void | undefined> | Record<string, string> | void | undefined;
  /** Each SSE stream as it opens (a graceful shutdown ends them with a final frame). */
  streamOpened?(stream: EventStream, principal: Principal | undefined): void;
  /** Each answered request (a stream: when it opens), by route template (undefined: no route matched); for metrics. */
  answered?(route: string | undefined, method: string, status: number, seconds: number): void;
}

export class HttpApi {
  readonly router = new Router<Route>();
  /** Every route in declaration order: the OpenAPI document is generated from this list. */
  readonly routes: Route[] = [];
  // The fields below are the wrapper's own state, read and kept by each request's Exchange (exchange.ts).
  /** Requests whose handler has not finished (streams included). */
  active = 0;
  /** Bytes held for slow SSE readers, all streams. */
  readonly sseGauge = new SseGauge();
  readonly slots: StreamSlots;
  private openStreams = 0;
  constructor(
    readonly hooks: HttpHooks,
    readonly log: Logger,
    readonly bodyLimit: number,
    readonly streams: StreamOptions = { bufferBytes: SSE_BUFFER_BYTES, maxPerAccount: 0 },
    readonly cors: Cors = new Cors([]),
  ) {
    this.slots = new StreamSlots(() => streams.maxPerAccount);
  }

  /** SSE streams open now. */
  get streamsOpen(): number {
    return this.openStreams;
  }

  fallbackRoute: Route | undefined;
  /** Answers GET/HEAD of paths outside /api/ that match no route (the console's client-side routes). */
  fallback(r: Route): void {
    this.fallbackRoute = r;
  }

  /** A GET/HEAD outside /api/ that no route matched goes to the fallback; /api/* keeps its JSON 404. */
  isFallback(e: unknown, method: string, path: string): boolean {
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
    new Exchange(this, res, uReq).start();
  }

  /** Counts SSE streams as they open (+1) and end (-1). */
  streamOpenedCount(delta: number): void {
    this.openStreams += delta;
  }
}

/** Kept here for the callers that parse a query string the way the wrapper does. */
export { parseQuery } from './exchange.js';
