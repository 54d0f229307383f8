// Entity declarations of the sessions tables (migration.ts holds the DDL).
// The hot paths (claiming, batching messages) use SQL through store.ts.
import { EntitySchema, BigIntType } from '@mikro-orm/postgresql';

export class Session {
  id!: string;
  userId!: string;
  agentId!: string;
  agentName!: string;
  title!: string;
  mode = 'default';
  effort = 'default';
  model: string | null = null;
  engineSessionId: string | null = null;
  runningTaskId: string | null = null;
  lastMessage: string | null = null;
  lastMsgAt: Date | null = null;
  lastActiveAt: Date | null = null;
  messageCount = 0;
  unread = 0;
  nextSeq = 0;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export class SessionTask {
  id!: string;
  n!: number;
  sessionId!: string;
  userId!: string;
  agentId!: string;
  hostId!: string;
  engine!: string;
  workDir!: string;
  messageId!: string;
  status!: string;
  queueReason: string | null = null;
  mode!: string;
  effort: string | null = null;
  inputTokens = 0;
  outputTokens = 0;
  model: string | null = null;
  errorCode: string | null = null;
  errorMessage: string | null = null;
  createdAt: Date = new Date();
  startedAt: Date | null = null;
  endedAt: Date | null = null;
}

export class SessionMessage {
  id!: string;
  n!: number;
  sessionId!: string;
  taskId: string | null = null;
  role!: string;
  kind!: string;
  content: string | null = null;
  seq!: number;
  toolName: string | null = null;
  toolId: string | null = null;
  toolInput: unknown = null;
  toolResult: unknown = null;
  provider!: string;
  interrupted = false;
  createdAt: Date = new Date();
}

export class SessionIdempotency {
  userId!: string;
  key!: string;
  bodyHash!: string;
  response!: unknown;
  createdAt: Date = new Date();
}

const big = { type: new BigIntType('number') };

export const SessionSchema = new EntitySchema<Session>({
  class: Session,
  tableName: 'sessions',
  properties: {
    id: { type: 'string', primary: true },
    userId: { type: 'string' },
    agentId: { type: 'string' },
    agentName: { type: 'string' },
    title: { type: 'string' },
    mode: { type: 'string' },
    effort: { type: 'string' },
    model: { type: 'string', nullable: true },
    engineSessionId: { type: 'string', nullable: true },
    runningTaskId: { type: 'string', nullable: true },
    lastMessage: { type: 'text', nullable: true },
    lastMsgAt: { type: 'Date', nullable: true },
    lastActiveAt: { type: 'Date', nullable: true },
    messageCount: { type: 'integer' },
    unread: { type: 'integer' },
    nextSeq: { type: 'integer' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date', onUpdate: () => new Date() },
  },
});

export const SessionTaskSchema = new EntitySchema<SessionTask>({
  class: SessionTask,
  tableName: 'session_tasks',
  properties: {
    id: { type: 'string', primary: true },
    n: { ...big, autoincrement: true },
    sessionId: { type: 'string' },
    userId: { type: 'string' },
    agentId: { type: 'string' },
    hostId: { type: 'string' },
    engine: { type: 'string' },
    workDir: { type: 'string' },
    messageId: { type: 'string' },
    status: { type: 'string' },
    queueReason: { type: 'string', nullable: true },
    mode: { type: 'string' },
    effort: { type: 'string', nullable: true },
    inputTokens: big,
    outputTokens: big,
    model: { type: 'string', nullable: true },
    errorCode: { type: 'string', nullable: true },
    errorMessage: { type: 'text', nullable: true },
    createdAt: { type: 'Date' },
    startedAt: { type: 'Date', nullable: true },
    endedAt: { type: 'Date', nullable: true },
  },
});

export const SessionMessageSchema = new EntitySchema<SessionMessage>({
  class: SessionMessage,
  tableName: 'session_messages',
  properties: {
    id: { type: 'string', primary: true },
    n: { ...big, autoincrement: true },
    sessionId: { type: 'string' },
    taskId: { type: 'string', nullable: true },
    role: { type: 'string' },
    kind: { type: 'string' },
    content: { type: 'text', nullable: true },
    seq: { type: 'integer' },
    toolName: { type: 'string', nullable: true },
    toolId: { type: 'string', nullable: true },
    toolInput: { type: 'json', nullable: true },
    toolResult: { type: 'json', nullable: true },
    provider: { type: 'string' },
    interrupted: { type: 'boolean' },
    createdAt: { type: 'Date' },
  },
});

export const SessionIdempotencySchema = new EntitySchema<SessionIdempotency>({
  class: SessionIdempotency,
  tableName: 'session_idempotency',
  properties: {
    userId: { type: 'string', primary: true },
    key: { type: 'string', primary: true },
    bodyHash: { type: 'string' },
    response: { type: 'json' },
    createdAt: { type: 'Date' },
  },
});

export const sessionEntities = [SessionSchema, SessionTaskSchema, SessionMessageSchema, SessionIdempotencySchema];
