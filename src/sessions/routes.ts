// HTTP surface of sessions: parse, authorize, call the service, shape the
// reply (envelope, the spec's plain 202, or an SSE stream).
import Type from 'typebox';
import type { HttpApi, Req } from '../server/http.js';
import { compileBody, compileQuery } from '../server/schema.js';
import { ok, plain, stream } from '../server/reply.js';
import { fail } from '../errors.js';
import type { SessionService } from './service.js';
import type { Messaging, SendResult } from './messaging.js';
import type { Feed, SessionEvents } from './events.js';
import type { SessionResume } from './resume.js';
import { Aborted, Accepted, Cancelled, Cost, Deleted, History, Queue, Session, SessionPage } from './view-schemas.js';
import { PAGE_MAX } from '../paging.js';

const Mode = Type.Union([Type.Literal('default'), Type.Literal('accept-edits'), Type.Literal('auto'), Type.Literal('plan')]);
const Effort = Type.Union([Type.Literal('low'), Type.Literal('default'), Type.Literal('medium'), Type.Literal('high')]);
const Content = Type.String({ minLength: 1, maxLength: 100_000 });
const Options = Type.Object({ effort: Type.Optional(Effort), permissionMode: Type.Optional(Mode) }, { additionalProperties: false });

export const CreateBody = compileBody(Type.Object({
  agentId: Type.String({ minLength: 1, maxLength: 200 }),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  mode: Type.Optional(Mode),
  effort: Type.Optional(Effort),
  content: Type.Optional(Content),
  options: Type.Optional(Options),
}, { additionalProperties: false }));
export const SendBody = compileBody(Type.Object({ content: Content, options: Type.Optional(Options) }, { additionalProperties: false }));
export const PatchBody = compileBody(Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  mode: Type.Optional(Mode),
  effort: Type.Optional(Effort),
}, { additionalProperties: false }));
export const ListQuery = compileQuery(Type.Object({
  agentId: Type.Optional(Type.String({ maxLength: 200 })),
  keyword: Type.Optional(Type.String({ maxLength: 100 })),
  q: Type.Optional(Type.String({ maxLength: 100 })),
  sort: Type.Optional(Type.Union([Type.Literal('lastMsgAt'), Type.Literal('-createdAt'), Type.Literal('createdAt')])),
  page: Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
}, { additionalProperties: false }));
export const ReadQuery = compileQuery(Type.Object({
  includeMessages: Type.Boolean({ default: false }),
  messageLimit: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
}, { additionalProperties: false }));
export const HistoryQuery = compileQuery(Type.Object({
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
}, { additionalProperties: false }));
const LAST_EVENT_ID_MAX = 200;
const EventsQuery = compileQuery(Type.Object({ lastEventId: Type.Optional(Type.String({ maxLength: LAST_EVENT_ID_MAX })) }, { additionalProperties: false }));

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._~-]{1,128}$/;

/** Header rules of the spec: accept and content-type at most 128 characters. */
function wantsStream(req: Req): boolean {
  const accept = req.headers['accept'] ?? '';
  if (accept.length > 128) throw fail('VALIDATION', 'header accept: longer than 128 characters');
  if ((req.headers['content-type'] ?? '').length > 128) throw fail('VALIDATION', 'header content-type: longer than 128 characters');
  return /text\/event-stream/i.test(accept);
}

export function sessionRoutes(api: HttpApi, sessions: SessionService, messaging: Messaging, events: SessionEvents, resume: SessionResume): void {
  /**
   * A feed that lives only as long as the response: released however it ends (client gone
   * before or while the stream starts, handler failed, stream over).
   */
  const feedFor = (req: Req, sessionId: string): Feed => {
    const feed = events.feed(sessionId);
    req.whenDone(() => feed.close());
    return feed;
  };

  /** 202 JSON when queued (never a stream); otherwise the stream when asked for. */
  const answer = (r: SendResult, feed: Feed | undefined) => {
    if (!feed || r.queued) {
      feed?.close();
      return plain(202, r.body);
    }
    const { taskId } = r.body;
    return stream((s) => feed.pipe(s, taskId, { afterAccepted: () => ({ status: 'processing', runId: taskId }) }).then(() => undefined));
  };

  api.route({
    method: 'POST', path: '/api/v1/sessions', auth: 'user', body: CreateBody, data: Session,
    doc: { status: 201, accepted: Accepted, events: 'on-accept', headers: [{ name: 'Idempotency-Key', description: 'retries with the same key answer as the first request (1 to 128 of letters, digits, `._~-`)' }, { name: 'Accept', description: '`text/event-stream` to receive the run as a stream instead of the 202 (at most 128 characters)' }], summary: 'Create a session; with `content`, also send the first message (202, or a stream with `Accept: text/event-stream`)' },
    handler: async (req) => {
      const key = req.headers['idempotency-key'];
      if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw fail('VALIDATION', 'header idempotency-key: 1 to 128 of letters, digits, ".", "_", "~", "-"');
      const sse = wantsStream(req) && req.body.content !== undefined;
      if (sse) req.holdStream(); // over the cap: refused before anything is accepted
      let feed: Feed | undefined;
      const r = await sessions.create(req.principal.userId, req.body, key, sse ? (id) => (feed = feedFor(req, id)) : undefined);
      if (r.kind === 'replay') return r.answer.status === 201 ? ok(r.answer.body, 201) : plain(r.answer.status, r.answer.body);
      if (r.kind === 'session') return ok(r.session, 201);
      return answer(r.send, feed);
    },
  });

  api.route({ method: 'GET', path: '/api/v1/sessions', auth: 'user', query: ListQuery, data: SessionPage, handler: (req) => sessions.list(req.principal.userId, req.query) });
  api.route({
    method: 'GET', path: '/api/v1/sessions/:id', auth: 'user', query: ReadQuery, data: Session,
    handler: (req) => sessions.get(req.principal.userId, req.params.id, req.query.includeMessages, req.query.messageLimit),
  });
  api.route({ method: 'PATCH', path: '/api/v1/sessions/:id', auth: 'user', body: PatchBody, data: Session, handler: (req) => sessions.update(req.principal.userId, req.params.id, req.body) });
  api.route({ method: 'DELETE', path: '/api/v1/sessions/:id', auth: 'user', data: Deleted, handler: (req) => sessions.remove(req.principal.userId, req.params.id) });

  api.route({
    method: 'GET', path: '/api/v1/sessions/:id/messages', auth: 'user', query: HistoryQuery, data: History,
    handler: (req) => sessions.history(req.principal.userId, req.params.id, req.query),
  });
  api.route({
    method: 'POST', path: '/api/v1/sessions/:id/messages', auth: 'user', body: SendBody,
    doc: { accepted: Accepted, events: 'on-accept', headers: [{ name: 'Accept', description: '`text/event-stream` to receive the run as a stream instead of the 202 (at most 128 characters)' }], summary: 'Send a message: 202 (started or queued), or the run as a stream with `Accept: text/event-stream`' },
    handler: async (req) => {
      const sse = wantsStream(req);
      if (sse) req.holdStream();
      let feed: Feed | undefined;
      const r = await messaging.send(req.principal.userId, req.params.id, req.body.content, req.body.options ?? {}, undefined, sse ? (id) => (feed = feedFor(req, id)) : undefined);
      return answer(r, feed);
    },
  });
  api.route({ method: 'POST', path: '/api/v1/sessions/:id/abort', auth: 'user', data: Aborted, handler: (req) => messaging.abort(req.principal.userId, req.params.id) });
  api.route({ method: 'GET', path: '/api/v1/sessions/:id/cost', auth: 'user', data: Cost, handler: (req) => sessions.cost(req.principal.userId, req.params.id) });
  api.route({ method: 'GET', path: '/api/v1/sessions/:id/queue', auth: 'user', data: Queue, handler: (req) => messaging.queue(req.principal.userId, req.params.id) });
  api.route({
    method: 'DELETE', path: '/api/v1/sessions/:id/queue/:taskId', auth: 'user', data: Cancelled,
    handler: (req) => messaging.cancelQueued(req.principal.userId, req.params.id, req.params.taskId),
  });

  // Resumes the live stream of the current turn: Last-Event-ID (header, or ?lastEventId=) replays what the ring still holds.
  api.route({
    method: 'GET', path: '/api/v1/sessions/:id/events', auth: 'user', query: EventsQuery,
    doc: { events: 'always', headers: [{ name: 'Last-Event-ID', description: 'resume after this event id (`<runId>:<n>`), replaying what the hub still holds' }], summary: 'Resume the live stream of the current turn (`Last-Event-ID` header or `lastEventId`)' },
    handler: async (req) => {
      const userId = req.principal.userId;
      const id = req.params.id;
      // The header is held to the query parameter's bound: it is echoed as the snapshot's id and carried to other nodes.
      const lastId = req.headers['last-event-id'] || req.query.lastEventId;
      if (lastId && lastId.length > LAST_EVENT_ID_MAX) throw fail('VALIDATION', `header last-event-id: longer than ${LAST_EVENT_ID_MAX} characters`);
      req.holdStream();
      const feed = feedFor(req, id); // subscribe before reading state: nothing falls between
      const row = await sessions.row(userId, id);
      const { runId, replay } = await resume.resume(id, row.running_task_id ?? undefined, lastId || undefined);
      const snapshot = { sessionId: id, status: row.running_task_id ? 'processing' : Number(row.pending ?? 0) > 0 ? 'queued' : 'active', runId: runId ?? null, messageCount: Number(row.message_count), pendingRuns: Number(row.pending ?? 0), resumed: replay !== null };
      return stream(async (s) => {
        s.send('snapshot', snapshot, lastId || undefined);
        if (!runId) {
          feed.close();
          return s.end();
        }
        await feed.pipe(s, runId, { before: replay ?? [] });
      });
    },
  });
}
