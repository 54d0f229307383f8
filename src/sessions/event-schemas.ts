// The schemas of the session SSE events, for the OpenAPI document and the
// typed client (src/client/sse.ts). Keyed by SessionEventName so a new event
// name cannot be added without its schema.
import Type, { type Static, type TSchema } from 'typebox';
import type { SessionEventName } from './events.js';
import { SHUTDOWN_EVENT } from '../server/shutdown.js';
import { REVOKED_EVENT } from '../server/revoked.js';

const Base = { sessionId: Type.String(), status: Type.String() };
const Failure = { code: Type.String(), message: Type.String() };

const Events = {
  snapshot: Type.Object({ ...Base, runId: Type.Union([Type.String(), Type.Null()]), messageCount: Type.Optional(Type.Integer()), pendingRuns: Type.Optional(Type.Integer()), resumed: Type.Optional(Type.Boolean()) }),
  accepted: Type.Object({ ...Base, runId: Type.String() }),
  'message.delta': Type.Object({ ...Base, delta: Type.String() }),
  // run-batch.ts: the call's row is committed first; the history has its input and result.
  'tool.started': Type.Object({ ...Base, toolName: Type.String(), toolId: Type.Union([Type.String(), Type.Null()]) }),
  'tool.completed': Type.Object({ ...Base, toolName: Type.String(), toolId: Type.Union([Type.String(), Type.Null()]), isError: Type.Boolean() }),
  'run.completed': Type.Object({ ...Base, status: Type.Literal('completed') }),
  'run.error': Type.Object({ ...Base, status: Type.Union([Type.Literal('error'), Type.Literal('aborted')]), ...Failure }),
} satisfies Record<SessionEventName, TSchema>;

export const SESSION_EVENT_SCHEMAS: Record<SessionEventName, TSchema> = Events;

const Shutdown = Type.Object({ reason: Type.String(), reconnect: Type.Boolean() });
const Revoked = Type.Object(Failure);

/** Any SSE stream's last frame when its hub node shuts down (server/shutdown.ts) or its credential is revoked (server/revoked.ts). */
export const STREAM_EVENT_SCHEMAS: Record<string, TSchema> = {
  [SHUTDOWN_EVENT]: Shutdown,
  [REVOKED_EVENT]: Revoked,
};

/** The data object of each event a session stream carries, by event name. */
export type SessionEventData = { [K in keyof typeof Events]: Static<(typeof Events)[K]> } & { shutdown: Static<typeof Shutdown>; revoked: Static<typeof Revoked> };
