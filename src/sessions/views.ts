// Rows → the spec's Session and Message objects.
import { ms } from './sql.js';

export type SessionStatus = 'active' | 'processing' | 'queued';

export interface SessionRow {
  id: string;
  user_id: string;
  agent_id: string;
  agent_name: string;
  title: string;
  mode: string;
  effort: string;
  model: string | null;
  engine_session_id: string | null;
  running_task_id: string | null;
  last_message: string | null;
  last_msg_at: Date | string | null;
  last_active_at: Date | string | null;
  message_count: number;
  unread: number;
  created_at: Date | string;
  updated_at: Date | string;
  /** Queued tasks (joined in by the queries that need it). */
  pending?: number | string;
}

export interface MessageRow {
  id: string;
  session_id: string;
  task_id: string | null;
  role: string;
  kind: string;
  content: string | null;
  seq: number;
  tool_name: string | null;
  tool_id: string | null;
  tool_input: unknown;
  tool_result: unknown;
  provider: string;
  interrupted: boolean;
  created_at: Date | string;
}

/** processing while a turn runs; queued when messages wait and none runs; else active. */
export function statusOf(running: boolean, pending: number): SessionStatus {
  return running ? 'processing' : pending > 0 ? 'queued' : 'active';
}

const DAY = 86_400_000;

/** 今天 / 本周 / 更早 by the UTC calendar; weeks start on Monday. */
export function groupOf(at: number, now = Date.now()): '今天' | '本周' | '更早' {
  const today = Math.floor(now / DAY) * DAY;
  if (at >= today) return '今天';
  const weekday = (new Date(today).getUTCDay() + 6) % 7; // Monday = 0
  return at >= today - weekday * DAY ? '本周' : '更早';
}

export function sessionView(r: SessionRow, now = Date.now()) {
  const pending = Number(r.pending ?? 0);
  const lastMsgAt = ms(r.last_msg_at);
  const processing = r.running_task_id !== null;
  return {
    id: r.id,
    title: r.title,
    agentId: r.agent_id,
    agentName: r.agent_name,
    status: statusOf(processing, pending),
    mode: r.mode,
    effort: r.effort,
    ...(r.model ? { model: r.model } : {}),
    ...(r.last_message !== null ? { lastMessage: r.last_message } : {}),
    updatedAt: new Date(r.updated_at).toISOString(),
    createdAt: new Date(r.created_at).toISOString(),
    messageCount: Number(r.message_count),
    group: groupOf(lastMsgAt ?? ms(r.created_at)!, now),
    unread: Number(r.unread),
    processing,
    pendingRuns: pending,
    ...(lastMsgAt !== undefined ? { lastMsgAt } : {}),
    ...(r.last_active_at ? { lastActiveAt: ms(r.last_active_at) } : {}),
  };
}

export function messageView(r: MessageRow) {
  const out: Record<string, unknown> = {
    id: r.id,
    sessionId: r.session_id,
    role: r.role,
    timestamp: new Date(r.created_at).toISOString(),
    provider: r.provider,
    kind: r.kind,
    seq: r.seq,
  };
  if (r.content !== null) out.content = r.content;
  if (r.tool_name !== null) out.toolName = r.tool_name;
  if (r.tool_id !== null) out.toolId = r.tool_id;
  if (r.tool_input !== null && r.tool_input !== undefined) out.toolInput = r.tool_input;
  if (r.tool_result !== null && r.tool_result !== undefined) out.toolResult = r.tool_result;
  if (r.interrupted) out.interrupted = true;
  if (r.task_id) out.runId = r.task_id;
  return out;
}
