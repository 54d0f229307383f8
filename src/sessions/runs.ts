// Frames of running turns → normalized history, session state and events.
// One RunState per run on the node that holds the host's channel. Messages
// are buffered and written in batches (one transaction per flush, never per
// delta); events describing persisted rows are published after the commit.
import type { HubContext } from '../context.js';
import type { Block, FrameOf, HostToHub, Usage } from '../../host-protocol/frames.js';
import type { RunFrame } from '../hosts/gateway.js';
import { newId } from '../ids.js';
import { notifyAgentChanged, runCounters } from '../agents/usage.js';
import { rows, one, tx, marks, type Em } from './sql.js';
import { GroupCommit } from './group.js';
import type { SessionEvents, SessionEventName } from './events.js';
import type { ClaimedTask } from './queue.js';

type Ev = [SessionEventName, Record<string, unknown>];
type RunEnd = Omit<FrameOf<HostToHub, 'run.end'>, 't' | 'runId'>;
interface EndItem {
  st: RunState;
  end: RunEnd;
  rows: Row[];
  partial: string;
  usage: Usage;
}
interface EndOut {
  evs: Array<[string, Ev]>;
  publishEnd: boolean;
  status: string;
}
/** What a run's end adds to its last write. */
interface Fin {
  status: string;
  usage: Usage;
  error?: RunEnd['error'];
  userId: string;
  interrupted: boolean;
  /** Set when the agent's modelName must change. */
  model?: string;
}

/** Pending rows are written at most this long after they arrive. */
export const FLUSH_MS = 20;
/** Agent counter changes reach the market caches at most this late. */
const NOTIFY_MS = 250;

interface Row {
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

interface RunState {
  runId: string;
  sessionId: string;
  hostId: string;
  agentId: string;
  engine: string;
  /** false while a run unknown to this node (hub restart) is loaded from the database. */
  ready: boolean;
  backlog: RunFrame[];
  /** The run is over for this node: later frames are ignored. */
  closed: boolean;
  model?: string;
  engineSessionId?: string;
  /** Streamed text not yet covered by a complete assistant message (kept on abort). */
  partial: string;
  pending: Row[];
  toolSeq: Map<string, number>;
  toolNames: Map<string, string>;
  /** Events in frame order; a tool event waits here until its row is committed, and deltas behind it wait too. */
  outq: Array<{ rowId?: string; ev?: Ev }>;
  rowEvents: Map<string, Ev>;
  timer?: NodeJS.Timeout;
  chain: Promise<void>;
}

/** Cost rule of the spec: input + output × 2. */
export const costOf = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens * 2;

export class RunTracker {
  private states = new Map<string, RunState>();
  /** The model this node last recorded per agent: the agent row is written only when it changes. */
  private models = new Map<string, string>();

  constructor(
    private readonly ctx: HubContext,
    private readonly events: SessionEvents,
    /** Called after a run's end is committed (the host's running count changed). */
    private readonly onEnded: (hostId: string) => void,
  ) {}

  /** A claimed task was sent to its host. */
  started(t: ClaimedTask): void {
    this.states.set(t.id, this.newState(t.id, t.sessionId, t.hostId, t.agentId, t.engine, true));
    this.events.emit(t.sessionId, t.id, 'accepted', { runId: t.id });
  }

  isLocal(runId: string): boolean {
    return this.states.has(runId);
  }

  handle(hostId: string, f: RunFrame): void {
    let st = this.states.get(f.runId);
    if (!st) {
      st = this.newState(f.runId, '', hostId, '', '', false);
      this.states.set(f.runId, st);
      st.backlog.push(f);
      void this.adopt(st);
      return;
    }
    if (!st.ready) return void st.backlog.push(f);
    this.apply(st, f);
  }

  /** Ends a run from outside its frames (dispatch failure, host gone, abort). */
  end(runId: string, end: RunEnd, fallback?: { sessionId: string; hostId: string; agentId: string; engine: string }): Promise<void> {
    let st = this.states.get(runId);
    if (!st) {
      if (!fallback) return Promise.resolve();
      st = this.newState(runId, fallback.sessionId, fallback.hostId, fallback.agentId, fallback.engine, true);
      this.states.set(runId, st);
    }
    return this.finish(st, end);
  }

  /** Every run this node tracks on a host. */
  runsOn(hostId: string): string[] {
    return [...this.states.values()].filter((s) => s.hostId === hostId && !s.closed).map((s) => s.runId);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.states.values()].map((s) => s.chain));
    if (this.notifyTimer) {
      clearTimeout(this.notifyTimer);
      this.notifyTimer = undefined;
      if (this.changedAgents.size) notifyAgentChanged(this.ctx.bus, ...this.changedAgents);
    }
    for (const s of this.states.values()) if (s.timer) clearTimeout(s.timer);
  }

  // ---------- frames ----------

  private apply(st: RunState, f: RunFrame): void {
    if (st.closed) {
      if (f.t === 'run.end') this.lateEnd(st, f);
      return;
    }
    switch (f.t) {
      case 'run.init':
        st.model = f.model ?? st.model;
        st.engineSessionId = f.engineSessionId ?? st.engineSessionId;
        this.schedule(st, true);
        return;
      case 'run.delta':
        st.partial += f.text;
        if (st.outq.length) st.outq.push({ ev: ['message.delta', { delta: f.text }] });
        else this.events.emit(st.sessionId, st.runId, 'message.delta', { delta: f.text });
        return;
      case 'run.message':
        for (const b of f.blocks) {
          if (f.role === 'assistant' && b.kind === 'text') st.partial = '';
          if (f.role === 'user' && b.kind !== 'tool_result') continue; // the prompt echo is already stored
          const row = this.row(f.role, b);
          st.pending.push(row);
          if (b.kind === 'tool_use' || b.kind === 'tool_result') st.outq.push({ rowId: row.id });
        }
        this.schedule(st);
        return;
      case 'run.end':
        void this.finish(st, f);
        return;
    }
  }

  private row(role: string, b: Block, interrupted = false): Row {
    return {
      id: newId('msg'), role, kind: b.kind, content: b.content ?? null, toolName: b.toolName ?? null, toolId: b.toolId ?? null,
      toolInput: b.kind === 'tool_use' ? (b.toolInput && typeof b.toolInput === 'object' ? b.toolInput : {}) : null,
      toolResult: b.kind === 'tool_result' ? (b.toolResult ?? { content: '', isError: false }) : null, interrupted,
    };
  }

  private schedule(st: RunState, soon = false): void {
    if (st.timer) return;
    st.timer = setTimeout(() => {
      st.timer = undefined;
      st.chain = st.chain.then(() => this.flush(st)).catch((e) => this.ctx.log.error('session flush failed', { runId: st.runId, err: e }));
    }, soon ? 0 : FLUSH_MS);
  }

  /** Writes pending rows (and model / engine session) in one transaction, then publishes their events. */
  private async flush(st: RunState): Promise<void> {
    const batch = st.pending.splice(0);
    const em = this.ctx.em() as unknown as Em;
    const evs = await tx(em, (t) => this.write(t, st, batch));
    this.publish(st, evs);
  }

  /**
   * Writes a batch in ONE statement: the session's counters (and, at a run's end, `fin`: the task's
   * end, the running slot, the agent's counters) plus the new rows, whose seq is numbered from the
   * counter the same statement bumps.
   */
  private async write(em: Em, st: RunState, batch: Row[], fin?: Fin): Promise<Array<[string, Ev]>> {
    const evs: Array<[string, Ev]> = [];
    // A tool_result takes its tool_use's seq: known from an earlier flush, earlier in this batch, or stored.
    // Each row gets either a known seq or an offset from the base the statement returns.
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
    const texts = batch.filter((r) => r.kind === 'text' && r.role === 'assistant');
    const lastText = texts.length ? texts[texts.length - 1].content : null;
    const params: unknown[] = [fresh, batch.length, texts.length, lastText?.slice(0, 500) ?? null, batch.length, st.model ?? null, st.engineSessionId ?? null,
      fin ? st.runId : null, st.sessionId, fresh];
    const ctes = [`s as (update sessions set next_seq = next_seq + ?, message_count = message_count + ?, unread = unread + ?,
         last_message = coalesce(?, last_message), last_msg_at = case when ? > 0 then now() else last_msg_at end,
         last_active_at = now(), updated_at = now(), model = coalesce(?, model), engine_session_id = coalesce(?, engine_session_id),
         running_task_id = case when running_task_id = ?::text then null else running_task_id end
       where id = ? returning next_seq - ? as base)`];
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
    if (fin) {
      if (fin.interrupted) {
        ctes.push(`i as (update session_messages set interrupted = true where task_id = ? and role = 'assistant' returning 1)`);
        params.push(st.runId);
      }
      ctes.push(`t as (update session_tasks set status = ?, input_tokens = ?, output_tokens = ?, model = coalesce(?, model), error_code = ?, error_message = ?, ended_at = now() where id = ? returning 1)`);
      params.push(fin.status, fin.usage.inputTokens, fin.usage.outputTokens, st.model ?? null, fin.error?.code ?? null, fin.error?.message ?? null, st.runId);
      if (st.agentId) {
        const run = runCounters(st.agentId, { cost: costOf(fin.usage), userId: fin.userId }, fin.model);
        ctes.push(`a as (${run.sql} returning 1)`);
        params.push(...run.params);
      }
    }
    const base = await one<{ base: number }>(em, `with ${ctes.join(',\n')} select base from s`, params);
    if (!base || !batch.length) return evs; // session deleted meanwhile, or nothing but model / engine session
    const b0 = Number(base.base);
    batch.forEach((r, i) => {
      const seq = known[i] ?? b0 + offset[i]!;
      if (r.kind === 'tool_use' && r.toolId && known[i] === null) {
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

  /** After commit: marks the rows' events ready and releases the queue up to the first row not yet written. */
  private publish(st: RunState, evs: Array<[string, Ev]>, all = false): void {
    for (const [rowId, ev] of evs) st.rowEvents.set(rowId, ev);
    while (st.outq.length) {
      const o = st.outq[0];
      const ev = o.rowId ? st.rowEvents.get(o.rowId) : o.ev;
      if (!ev && !all) break;
      st.outq.shift();
      if (o.rowId) st.rowEvents.delete(o.rowId);
      if (ev) this.events.emit(st.sessionId, st.runId, ev[0], ev[1]);
    }
  }

  // ---------- the end of a run ----------

  private finish(st: RunState, end: RunEnd): Promise<void> {
    if (st.closed) return st.chain;
    st.closed = true;
    if (st.timer) {
      clearTimeout(st.timer);
      st.timer = undefined;
    }
    st.model = end.model ?? st.model;
    st.engineSessionId = end.engineSessionId ?? st.engineSessionId;
    st.chain = st.chain
      .then(() => this.finalize(st, end))
      .catch((e) => this.ctx.log.error('session run end failed', { runId: st.runId, err: e }))
      .finally(() => {
        setTimeout(() => this.states.get(st.runId) === st && this.states.delete(st.runId), 60_000).unref?.();
        this.onEnded(st.hostId);
      });
    return st.chain;
  }

  /** Run ends arriving together are written in one transaction (group commit). */
  private readonly ends = new GroupCommit<EndItem, EndOut | undefined>(() => this.ctx.em() as unknown as Em, (t, items) => this.endMany(t, items), (i) => i.st.sessionId);

  private async finalize(st: RunState, end: RunEnd): Promise<void> {
    // Taken out of the state once, so a retried batch writes the same rows.
    const item: EndItem = { st, end, rows: st.pending.splice(0), partial: st.partial, usage: end.usage ?? { inputTokens: 0, outputTokens: 0 } };
    st.partial = '';
    const out = await this.ends.submit(item);
    if (!out) return;
    this.publish(st, out.evs, true);
    if (st.agentId) {
      if (st.model) this.models.set(st.agentId, st.model);
      this.agentChanged(st.agentId);
    }
    if (!out.publishEnd) return; // aborted: the abort already told the readers
    if (out.status === 'completed') this.events.emit(st.sessionId, st.runId, 'run.completed', { status: 'completed' });
    else this.events.emit(st.sessionId, st.runId, 'run.error', { status: 'error', code: end.error?.code ?? 'ENGINE_FAILED', message: end.error?.message ?? 'the engine failed' });
  }

  /** Ends several runs in the caller's transaction: sessions locked (sorted), then their tasks, then one statement per run. */
  private async endMany(t: Em, items: EndItem[]): Promise<Array<EndOut | undefined>> {
    const sids = [...new Set(items.map((i) => i.st.sessionId))].sort();
    await rows(t, `select id from sessions where id in (${marks(sids.length)}) order by id for update`, sids); // lock order: sessions, then tasks
    const rids = items.map((i) => i.st.runId).sort();
    const prevs = new Map((await rows<{ id: string; status: string; ended_at: unknown; user_id: string }>(t,
      `select id, status, ended_at, user_id from session_tasks where id in (${marks(rids.length)}) order by id for update`, rids)).map((r) => [r.id, r]));
    const out: Array<EndOut | undefined> = [];
    for (const { st, end, rows: rowsIn, partial, usage } of items) {
      const prev = prevs.get(st.runId);
      if (!prev || prev.ended_at) {
        out.push(undefined);
        continue;
      }
      const batch = [...rowsIn];
      const interrupted = end.aborted === true || prev.status === 'aborted';
      if (interrupted) for (const r of batch) if (r.role === 'assistant') r.interrupted = true;
      if (interrupted && partial) batch.push(this.row('assistant', { kind: 'text', content: partial }, true));
      const status = prev.status !== 'running' ? prev.status : end.ok ? 'completed' : interrupted ? 'aborted' : 'failed';
      const model = st.agentId && st.model && this.models.get(st.agentId) !== st.model ? st.model : undefined;
      // One statement: the rows, the task's end, the session's running slot, the agent's counters.
      const evs = await this.write(t, st, batch, { status, usage, error: end.error, userId: prev.user_id, interrupted, model });
      out.push({ evs, publishEnd: prev.status === 'running', status });
    }
    return out;
  }

  /** Agent counters changed: tell the market caches, batched (one notice per agent per NOTIFY_MS). */
  private changedAgents = new Set<string>();
  private notifyTimer?: NodeJS.Timeout;
  private agentChanged(agentId: string): void {
    this.changedAgents.add(agentId);
    this.notifyTimer ??= setTimeout(() => {
      this.notifyTimer = undefined;
      const ids = [...this.changedAgents];
      this.changedAgents.clear();
      notifyAgentChanged(this.ctx.bus, ...ids);
    }, NOTIFY_MS);
  }

  /** run.end for a run this node already closed (aborted): keep its usage. */
  private lateEnd(st: RunState, f: FrameOf<HostToHub, 'run.end'>): void {
    if (f.usage) {
      const em = this.ctx.em() as unknown as Em;
      st.chain = st.chain
        .then(() => rows(em, `update session_tasks set input_tokens = ?, output_tokens = ? where id = ?`, [f.usage!.inputTokens, f.usage!.outputTokens, st.runId]))
        .then(() => undefined, () => undefined);
    }
    this.onEnded(st.hostId);
  }

  // ---------- runs unknown to this node ----------

  private newState(runId: string, sessionId: string, hostId: string, agentId: string, engine: string, ready: boolean): RunState {
    return { runId, sessionId, hostId, agentId, engine, ready, backlog: [], closed: false, partial: '', pending: [], toolSeq: new Map(), toolNames: new Map(), outq: [], rowEvents: new Map(), chain: Promise.resolve() };
  }

  /** A frame for a run this node did not start (hub restarted, or another node dispatched it): load it. */
  private async adopt(st: RunState): Promise<void> {
    try {
      const t = await one(this.ctx.em() as unknown as Em, `select session_id, host_id, agent_id, engine, status, ended_at from session_tasks where id = ?`, [st.runId]);
      if (t) Object.assign(st, { sessionId: t.session_id, hostId: t.host_id, agentId: t.agent_id, engine: t.engine });
      if (!t || t.ended_at || (t.status !== 'running' && t.status !== 'aborted')) st.closed = true;
    } catch (e) {
      this.ctx.log.error('cannot load run', { runId: st.runId, err: e });
      st.closed = true;
    }
    st.ready = true;
    for (const f of st.backlog.splice(0)) this.apply(st, f);
  }
}
