// The OpenAPI 3.1 document, generated from the route table: the same typebox
// schemas the wrapper validates with (bodies, queries), the `data` schemas the
// routes declare, the envelope, the error catalogue and the SSE event types.
// Nothing here is a second copy of a schema.
import type { TSchema } from 'typebox';
import { ErrorCatalogue, type ErrorName } from '../errors.js';
import type { Route } from './http.js';

type Json = Record<string, unknown>;

export interface OpenApiInput {
  routes: readonly Route[];
  /** Event name → data schema, for the streams of `doc.events` routes. */
  events: Record<string, TSchema>;
  version: string;
}

/** The JSON form of a typebox schema (its non-enumerable bookkeeping dropped). */
const json = (s: TSchema): Json => JSON.parse(JSON.stringify(s));

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorRef = (status: number) => ({ $ref: `#/components/responses/Error${status}` });

/** `/agents/:id` → `/agents/{id}`; the parameter names in order. */
export function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const p = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? (params.push(seg.slice(1)), `{${seg.slice(1)}}`) : seg))
    .join('/');
  return { path: p, params };
}

function errorsByStatus(): Map<number, ErrorName[]> {
  const out = new Map<number, ErrorName[]>();
  for (const name of Object.keys(ErrorCatalogue) as ErrorName[]) {
    const s = ErrorCatalogue[name].status;
    out.set(s, [...(out.get(s) ?? []), name]);
  }
  return out;
}

/** The errors the request wrapper itself can answer with for this route (handlers may add any catalogued one: see `default`). */
function wrapperErrors(r: Route, hasParams: boolean): number[] {
  const s = new Set<number>([429, 500]); // rate limits, internal
  if (r.body || r.query || hasParams) s.add(400);
  if (r.body || r.rawBody) s.add(413);
  if (r.auth !== 'none') s.add(401);
  if (r.auth === 'admin') s.add(403);
  if (hasParams) s.add(404);
  return [...s].sort((a, b) => a - b);
}

function queryParameters(r: Route): Json[] {
  const schema = r.query?.schema as Json | undefined;
  const props = schema?.properties as Record<string, Json> | undefined;
  if (!props) return [];
  const required = new Set((schema!.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => {
    const p = json(s as TSchema);
    // Defaults are applied by the server: such a field is optional to the caller.
    return { name, in: 'query', required: required.has(name) && !('default' in p), schema: p };
  });
}

function eventStream(events: Record<string, TSchema>): Json {
  return {
    schema: {
      description: 'Server-sent events: each frame has `id` (`<runId>:<n>` for session events), `event` (one of the names below) and `data` (JSON).',
      oneOf: Object.keys(events).map((name) => ({
        type: 'object',
        required: ['event', 'data'],
        properties: { id: { type: 'string' }, event: { const: name }, data: ref(`Event.${name}`) },
      })),
    },
  };
}

function successResponses(r: Route, events: Record<string, TSchema>): Json {
  const d = r.doc ?? {};
  const out: Json = {};
  if (d.raw) {
    const body = d.raw.contentType ? { content: { [d.raw.contentType]: { schema: d.raw.schema ? json(d.raw.schema) : { type: 'string' } } } } : {};
    out[String(d.raw.status)] = { description: d.raw.description, ...body };
    return out;
  }
  if (d.events === 'always') {
    out['200'] = { description: 'An event stream (`text/event-stream`).', content: { 'text/event-stream': eventStream(events) } };
    return out;
  }
  const data = r.data ? json(r.data) : ref('UndocumentedData');
  out[String(d.status ?? 200)] = {
    description: 'Success: the envelope with `code` "0".',
    content: { 'application/json': { schema: { allOf: [ref('Envelope'), { type: 'object', properties: { data } }] } } },
  };
  if (d.accepted) {
    out['202'] = { description: 'Accepted (or queued): a plain body, not the envelope.', content: { 'application/json': { schema: json(d.accepted) } } };
  }
  if (d.events === 'on-accept') {
    out['200'] = { description: 'With `Accept: text/event-stream` and work started at once: the run streamed as server-sent events.', content: { 'text/event-stream': eventStream(events) } };
  }
  return out;
}

/** Headers the request wrapper puts on some error statuses (src/server/http.ts, router.ts). */
const ERROR_HEADERS: Record<number, Json> = {
  401: { 'WWW-Authenticate': { description: '`Bearer realm="agent-hub"`, with `error="invalid_token"` (a refused credential) or `error="invalid_request"` (not a bearer)', schema: { type: 'string' } } },
  405: { Allow: { description: 'the methods the path answers', schema: { type: 'string' } } },
  429: { 'Retry-After': { description: 'seconds', schema: { type: 'string' } } },
};

export function buildOpenApi(input: OpenApiInput): Json {
  const byStatus = errorsByStatus();
  const paths: Record<string, Json> = {};
  for (const r of input.routes) {
    const { path, params } = openApiPath(r.path);
    const op: Json = {
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      tags: [path.split('/').filter(Boolean)[2] ?? 'api'],
      ...(r.doc?.summary ? { summary: r.doc.summary } : {}),
      'x-auth': r.auth,
      security: r.auth === 'none' ? [] : r.auth === 'optional' ? [{}, { bearer: [] }] : [{ bearer: [] }],
      ...(r.auth === 'admin' ? { description: 'Administrators only.' } : r.auth === 'optional' ? { description: 'Anonymous callers allowed; a bearer token adds what the caller may see.' } : {}),
      parameters: [
        ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
        ...queryParameters(r),
        ...(r.doc?.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })),
      ],
    };
    if (r.body) {
      op.requestBody = { required: r.emptyBody === undefined, content: { 'application/json': { schema: json(r.body.schema) } } };
    } else if (r.rawBody) {
      op.requestBody = { required: false, content: { '*/*': { schema: { type: 'string' } } } };
    }
    const responses: Json = successResponses(r, input.events);
    for (const s of wrapperErrors(r, params.length > 0)) responses[String(s)] = errorRef(s);
    responses.default = { $ref: '#/components/responses/Error' };
    op.responses = responses;
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }

  const responses: Json = {
    Error: {
      description: 'Any error of the catalogue (src/errors.ts), with its HTTP status and business `code`: ' +
        (Object.keys(ErrorCatalogue) as ErrorName[]).map((n) => `${ErrorCatalogue[n].status} ${ErrorCatalogue[n].code} ${n}`).join('; ') + '.',
      content: { 'application/json': { schema: ref('Error') } },
    },
  };
  for (const [status, names] of byStatus) {
    responses[`Error${status}`] = {
      description: names.map((n) => `${ErrorCatalogue[n].code} ${n}: ${ErrorCatalogue[n].message}`).join('; '),
      content: {
        'application/json': {
          schema: { allOf: [ref('Error'), { type: 'object', properties: { code: { enum: names.map((n) => ErrorCatalogue[n].code) } } }] },
        },
      },
      ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
    };
  }

  const schemas: Json = {
    Envelope: {
      type: 'object',
      required: ['code', 'message', 'data'],
      properties: { code: { type: 'string', description: '"0" on success; a business code of the catalogue otherwise.' }, message: { type: 'string' }, data: {} },
    },
    Error: {
      type: 'object',
      required: ['code', 'message', 'data'],
      properties: { code: { enum: [...new Set(Object.values(ErrorCatalogue).map((e) => e.code))] }, message: { type: 'string' }, data: { type: 'null' } },
      'x-catalogue': Object.fromEntries((Object.keys(ErrorCatalogue) as ErrorName[]).map((n) => [n, { status: ErrorCatalogue[n].status, code: ErrorCatalogue[n].code, message: ErrorCatalogue[n].message }])),
    },
    UndocumentedData: { description: 'The `data` of this route has no schema in the document yet: any JSON value.' },
  };
  for (const [name, s] of Object.entries(input.events)) schemas[`Event.${name}`] = json(s);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Hub API',
      version: input.version,
      description:
        'Generated from the hub\'s route table and the typebox schemas it validates with. JSON answers are the envelope `{code, message, data}` ' +
        '(code "0" on success) unless a route says otherwise (the plain 202 bodies of the session message endpoints, HTML pages, provider acknowledgements). ' +
        'Routes whose `data` has no schema yet show `UndocumentedData` (any JSON value) rather than a guessed one. ' +
        'Errors are the catalogue in `components.schemas.Error` (`x-catalogue`): each route lists the errors the request wrapper itself may answer with; its handler may answer with any catalogued error (`default`). ' +
        'Event streams (`text/event-stream`) carry the events in `components.schemas` named `Event.<name>`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key or an OIDC access token, as `Authorization: Bearer <token>`.' } },
      schemas,
      responses,
    },
  };
}
