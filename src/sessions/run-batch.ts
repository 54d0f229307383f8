// One batch of a run's normalized rows (and, at its end, the task's end and
// the agent's counters) written in a single statement; the run state types
// shared with runs.ts and run-end.ts. Split from runs.ts, which keeps the frame handling.
import type { Block, FrameOf, HostToHub } from '../../host-protocol/frames.js';
import type { RunFrame } from '../hosts/gateway.js';
import { one, type Em, type SqlEm } from './sql.js';
import { timeOrderedId } from '../ids.js';
import type { SessionEventName } from './events.js';
import type { PartialText } from './partial-text.js';

export type Ev = [SessionEventName, Record<string, unknown>];
export type RunEnd = Omit<FrameOf<HostToHub, 'run.end'>, 't' | 'runId'>;
/** Pending rows are written at most this long after they arrive. */
export const FLUSH_MS = 20;

export interface Row {
  id: string;
  role: string;
  kind: Block['kind'];
  content: string | null;
  toolName: string | null;
  toolId: string | null;
  toolInput: unknown;
  toolResult: unknown;
  interrupted: boolean;
}

/** A row for one block of a message (`interrupted`: the streamed text a stopped turn left). */
export function newRow(role: string, b: Block, interrupted = false): Row {
  return {
    id: timeOrderedId('msg'), role, kind: b.kind, content: b.content ?? null, toolName: b.toolName ?? null, toolId: b.toolId ?? null,
    toolInput: b.kind === 'tool_use' ? (b.toolInput && typeof b.toolInput === 'object' ? b.toolInput : {}) : null,
    toolResult: b.kind === 'tool_result' ? (b.toolResult ?? { content: '', isError: false }) : null, interrupted,
  };
}

export interface RunState {
  runId: string;
  sessionId: string;
  hostId: string;
  agentId: string;
  engine: string;
  /** false while a run unknown to this node (hub restart) is loaded from the database. */
  ready: boolean;
  /** Date.now() when this node took the run on (the duration in the run's log line). */
  since: number;
  /** A frame of the run came from its host through this node (the host has the run). */
  heard?: boolean;
  /** The host's run.end frame ended the run (not the hub: dispatch failure, host gone, abort). */
  hostEnded?: boolean;
  backlog: RunFrame[];
  /** The run is over for this node: later frames are ignored. */
  closed: boolean;
  model?: string;
  engineSessionId?: string;
  /** Streamed text not yet covered by a complete assistant message (kept on abort). */
  partial: PartialText;
  pending: Row[];
  toolSeq: Map<string, number>;
  toolNames: Map<string, string>;
  /** Characters of the tool ids and names of the run's tool_use blocks: `toolSeq` and `toolNames` hold them for the run's life (counted as held). */
  toolBytes: number;
  /** Bytes of the run's messages so far (never decreasing): bounded by `runStoredBytes`. */
  storedBytes: number;
  /** What the run's session stores in all, as the run's last mid-run write left it (sessions.stored_bytes). */
  sessionStored?: number;
  /** Events in frame order; a tool event waits here until its row is committed, and deltas behind it wait too. */
  outq: Array<{ rowId?: string; ev?: Ev }>;
  rowEvents: Map<string, Ev>;
  timer?: NodeJS.Timeout;
  chain: Promise<void>;
  /** Bytes of `pending` and of `backlog` (with `partial.bytes`, bounded: src/limits.ts). */
  pendingBytes: number;
  backlogBytes: number;
  /** Bytes taken since the host's bound was last checked for this run (RunTracker.over). */
  sinceHostCheck: number;
  /** The backlog went over its bound while the run was loaded: the run ends once it is. */
  overflow?: boolean;
  /**
   * `pending` starts with this many rows (`givenBackBytes` of them) that a failed write gave back, and
   * which that write may have stored after all: they are written again as that same batch, alone.
   */
  givenBack?: number;
  givenBackBytes?: number;
}

/** Cost rule of the spec: input + output × 2. */
export const costOf = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens * 2;


/** How a batch's rows are numbered: a known seq (a tool_result takes its tool_use's) or an offset from the base the write returns. */
export interface SeqPlan {
  known: Array<number | null>;
  offset: Array<number | null>;
  /** Rows that take a new seq. */
  fresh: number;
}

/** Numbers a batch's rows; a tool_result's tool_use is known from an earlier flush, earlier in this batch, or stored. */
export async function planSeqs(em: SqlEm, st: RunState, batch: Row[]): Promise<SeqPlan> {
  const known: Array<number | null> = [];
  const offset: Array<number | null> = [];
  const inBatch = new Map<string, number>();
  let fresh = 0;
  for (const [i, r] of batch.entries()) {
    let seq: number | undefined;
    if (r.kind === 'tool_result' && r.toolId) {
      seq = st.toolSeq.get(r.toolId);
      if (seq === undefined && inBatch.has(r.toolId)) {
        const j = inBatch.get(r.toolId)!;
        known.push(known[j]);
        offset.push(offset[j]);
        continue;
      }
      if (seq === undefined) {
        const u = await one(em, `select seq, tool_name from session_messages where session_id = ? and tool_id = ? and kind = 'tool_use' order by n desc limit 1`, [st.sessionId, r.toolId]);
        if (u) {
          seq = u.seq;
          st.toolNames.set(r.toolId, u.tool_name);
        }
      }
    }
    if (r.kind === 'tool_use' && r.toolId) inBatch.set(r.toolId, i);
    known.push(seq ?? null);
    offset.push(seq === undefined ? fresh++ : null);
  }
  return { known, offset, fresh };
}

/** After a batch is written from `base`: remembers its tool_use seqs and returns the tool events its rows describe. */
export function rowEvents(st: RunState, batch: Row[], plan: SeqPlan, base: number): Array<[string, Ev]> {
  const evs: Array<[string, Ev]> = [];
  batch.forEach((r, i) => {
    const seq = plan.known[i] ?? base + plan.offset[i]!;
    if (r.kind === 'tool_use' && r.toolId && plan.known[i] === null) {
      st.toolSeq.set(r.toolId, seq);
      st.toolNames.set(r.toolId, r.toolName ?? '');
    }
    if (r.kind === 'tool_use') evs.push([r.id, ['tool.started', { toolName: r.toolName ?? '', toolId: r.toolId }]]);
    if (r.kind === 'tool_result') {
      const tr = r.toolResult as { isError?: boolean };
      evs.push([r.id, ['tool.completed', { toolName: st.toolNames.get(r.toolId ?? '') ?? '', toolId: r.toolId, isError: tr?.isError === true }]]);
    }
  });
  return evs;
}

/** The assistant text rows of a batch: how many, and the last one's content. */
export function assistantTexts(batch: Row[]): { count: number; last: string | null } {
  const texts = batch.filter((r) => r.kind === 'text' && r.role === 'assistant');
  return { count: texts.length, last: texts.length ? texts[texts.length - 1].content : null };
}

/**
 * Writes a mid-run batch in ONE statement: the session's counters (model, engine session) plus the
 * new rows, whose seq is numbered from the counter the same statement bumps. A run's end is
 * written by hub_end_runs (end-function.ts) instead.
 * `again`: the very batch of a failed call, which may have stored it after all (its connection lost
 * after the commit): the statement is atomic, so when the batch's first row is stored the whole batch
 * is, and it writes nothing and answers the base its rows were numbered from. `bytes`: the rows' size
 * (frameBytes), added to the session's stored_bytes.
 */
export async function writeRunBatch(em: Em, st: RunState, batch: Row[], again = false, bytes = 0): Promise<Array<[string, Ev]>> {
  const plan = await planSeqs(em, st, batch);
  const { known, offset, fresh } = plan;
  const texts = assistantTexts(batch);
  const params: unknown[] = [again ? batch[0]?.id ?? null : null,
    fresh, batch.length, bytes, texts.count, texts.last?.slice(0, 500) ?? null, batch.length, st.model ?? null, st.engineSessionId ?? null,
    st.sessionId, fresh];
  const ctes = [`d as (select 1 from session_messages where id = ?)`,
    `s as (update sessions set next_seq = next_seq + ?, message_count = message_count + ?, stored_bytes = stored_bytes + ?, unread = unread + ?,
       last_message = coalesce(?, last_message), last_msg_at = case when ? > 0 then now() else last_msg_at end,
       last_active_at = now(), updated_at = now(), model = coalesce(?, model), engine_session_id = coalesce(?, engine_session_id)
     where id = ? and not exists (select 1 from d) returning next_seq - ? as base, stored_bytes)`];
  if (batch.length) {
    const values: string[] = [];
    params.push(st.sessionId, st.runId, st.engine); // the select list's placeholders come before the values'
    batch.forEach((r, i) => {
      values.push(`(?::text, ?::text, ?::text, ?::text, ?::int, ?::int, ?::text, ?::text, ?::jsonb, ?::jsonb, ?::boolean)`);
      params.push(r.id, r.role, r.kind, r.content, known[i], offset[i], r.toolName, r.toolId,
        r.toolInput === null ? null : JSON.stringify(r.toolInput), r.toolResult === null ? null : JSON.stringify(r.toolResult), r.interrupted);
    });
    ctes.push(`m as (insert into session_messages (id, session_id, task_id, role, kind, content, seq, tool_name, tool_id, tool_input, tool_result, provider, interrupted)
      select v.id, ?, ?, v.role, v.kind, v.content, coalesce(v.seq, s.base + v.off), v.tool_name, v.tool_id, v.tool_input, v.tool_result, ?, v.interrupted
        from (values ${values.join(', ')}) as v(id, role, kind, content, seq, off, tool_name, tool_id, tool_input, tool_result, interrupted), s
      returning 1)`);
  }
  // Stored already: the base is the seq of the row numbered first (offset 0), if any.
  params.push(batch[offset.indexOf(0)]?.id ?? null);
  const base = await one<{ base: number; stored_bytes: string | null }>(em, `with ${ctes.join(',\n')} select base, stored_bytes from s
    union all select coalesce((select seq from session_messages where id = ?), 0), null from d`, params);
  if (base?.stored_bytes != null) st.sessionStored = Number(base.stored_bytes);
  if (!base || !batch.length) return []; // session deleted meanwhile, or nothing but model / engine session
  return rowEvents(st, batch, plan, Number(base.base));
}

/** What a run has stored so far (its rows but its prompt, as frameBytes counts them): a node adopting it goes on from there. */
export async function storedByRun(em: Em, sessionId: string, runId: string): Promise<number> {
  const r = await one<{ n: string }>(em,
    `select coalesce(sum(coalesce(octet_length(content), 0) + coalesce(octet_length(tool_input::text), 0) + coalesce(octet_length(tool_result::text), 0)
                         + coalesce(length(tool_id), 0) + coalesce(length(tool_name), 0)), 0)::bigint as n
       from session_messages where session_id = ? and task_id = ? and not (role = 'user' and kind = 'text')`, [sessionId, runId]);
  return Number(r?.n ?? 0);
}
