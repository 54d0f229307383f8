// Schemas of the session views (views.ts, messaging.ts), for the OpenAPI document's response `data`.
import { literals } from '../server/schema.js';
import Type from 'typebox';

const lit = literals;

const SessionFields = {
  id: Type.String(),
  title: Type.String(),
  agentId: Type.String(),
  agentName: Type.String(),
  status: lit(['active', 'processing', 'queued']),
  mode: Type.String(),
  effort: Type.String(),
  model: Type.Optional(Type.String()),
  lastMessage: Type.Optional(Type.String()),
  updatedAt: Type.String({ format: 'date-time' }),
  createdAt: Type.String({ format: 'date-time' }),
  messageCount: Type.Integer(),
  group: lit(['今天', '本周', '更早']),
  unread: Type.Integer(),
  processing: Type.Boolean(),
  pendingRuns: Type.Integer(),
  lastMsgAt: Type.Optional(Type.Integer({ description: 'ms since the epoch' })),
  lastActiveAt: Type.Optional(Type.Integer({ description: 'ms since the epoch' })),
};

export const Message = Type.Object({
  id: Type.String(),
  sessionId: Type.String(),
  role: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  provider: Type.String(),
  kind: Type.String(),
  seq: Type.Integer(),
  content: Type.Optional(Type.String()),
  toolName: Type.Optional(Type.String()),
  toolId: Type.Optional(Type.String()),
  toolInput: Type.Optional(Type.Unknown()),
  toolResult: Type.Optional(Type.Unknown()),
  interrupted: Type.Optional(Type.Literal(true)),
  runId: Type.Optional(Type.String()),
});

/** sessionView; `messages` only with `includeMessages=true`. */
export const Session = Type.Object({ ...SessionFields, messages: Type.Optional(Type.Array(Message)) });

export const SessionPage = Type.Object({ items: Type.Array(Session), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer(), hasMore: Type.Boolean() });

export const History = Type.Object({
  items: Type.Array(Message),
  total: Type.Integer(),
  hasMore: Type.Boolean(),
  firstId: Type.Union([Type.String(), Type.Null()]),
  lastId: Type.Union([Type.String(), Type.Null()]),
});

/** The spec's plain 202 body of the message endpoints (messaging.ts SendBody). */
export const Accepted = Type.Object({
  sessionId: Type.String(),
  status: lit(['processing', 'queued']),
  taskId: Type.String(),
  queueReason: Type.Optional(lit(['session_busy', 'host_capacity'])),
});

export const Queue = Type.Object({
  items: Type.Array(Type.Object({
    taskId: Type.String(),
    messageId: Type.String(),
    content: Type.Union([Type.String(), Type.Null()]),
    queueReason: Type.Union([Type.String(), Type.Null()]),
    position: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
  })),
  total: Type.Integer(),
});

export const Cost = Type.Object({
  model: Type.String(), messageCount: Type.Integer(), inputTokens: Type.Integer(), outputTokens: Type.Integer(), totalTokens: Type.Integer(), cost: Type.Number(),
});

export const Aborted = Type.Object({ sessionId: Type.String(), status: Type.Literal('aborted') });
export const Cancelled = Type.Object({ taskId: Type.String(), cancelled: Type.Literal(true) });
export const Deleted = Type.Object({ deleted: Type.Literal(true) });
