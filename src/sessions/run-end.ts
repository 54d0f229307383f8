// Writing run ends: the ends arriving together go to hub_end_runs in one call
// (group commit; end-function.ts does the locks, the final status, the last
// rows, the running slot and the agents' counters), plus the usage a host
// reports after an aborted run's end was written, and each end's log line.
// runs.ts decides when a run is over; this module only writes it.
import type { HubContext } from '../context.js';
import type { Usage } from '../../host-protocol/frames.js';
import type { Logger } from '../log.js';
import { bound, rows, type Em, type SqlEm } from './sql.js';
import { GroupCommit } from './group.js';
import { planSeqs, rowEvents, assistantTexts, costOf, newRow, type Ev, type RunEnd, type Row, type RunState } from './run-batch.js';
import { engineFailure } from './engine-failure.js';
import { claimOf, type Claim, type ClaimRow } from './queue.js';
import { RUN_END_BATCH_MAX_BYTES } from '../limits.js';
import { retryUntilDone } from './retry.js';

/** One run's end as it is written: the rows and streamed text taken out of its state once, so every retry writes the same. */
export interface EndItem {
  st: RunState;
  end: RunEnd;
  rows: Row[];
  partial: string;
  usage: Usage;
  /** Bytes of its rows and streamed text, as the run held them (the batch's byte bound). */
  bytes: number;
}
export interface EndOut {
  evs: Array<[string, Ev]>;
  publishEnd: boolean;
  status: string;
  /** The run's host has waiting work that this write did not claim for (the scheduler drains it). */
  waiting: boolean;
  /** The host's waiting runs started by this write (hub_claim inside hub_end_runs): given to one run per host of the batch. */
  claim?: Claim;
}

/**
 * Usage reported after an aborted run's end was written: the run's tokens are updated and the cost
 * they add is charged (a second `spend` entry for the run, noted as such); the host has said its
 * engine is gone, so the run's slot of the host's capacity is free (engine_until). One statement.
 */
const LATE_USAGE_SQL = `with old as (select id, user_id, agent_id, input_tokens + output_tokens * 2 as cost from session_tasks where id = ? for no key update),
  upd as (update session_tasks t set input_tokens = ?, output_tokens = ?, engine_until = null from old where t.id = old.id returning old.cost)
  select hub_charge_runs(jsonb_build_array(jsonb_build_object('run', old.id, 'uid', old.user_id, 'aid', old.agent_id,
           'cost', greatest(0, ?::bigint - upd.cost), 'share', ?::numeric, 'note', 'usage reported after the abort'))) from old, upd`;

/** A row as hub_end_runs reads it (see end-function.ts). */
function rowJson(r: Row, seq: number | null, off: number | null, partial = false) {
  return {
    id: r.id, role: r.role, kind: r.kind, content: r.content, seq, off, tool_name: r.toolName, tool_id: r.toolId,
    tool_input: r.toolInput, tool_result: r.toolResult, interrupted: r.interrupted, ...(partial ? { partial: true } : {}),
  };
}

/**
 * Run-end batches written at once. A run's end starts its session's next message (the claim inside
 * hub_end_runs), so with one batch in flight the ends set the pace of a busy node: at 2,000
 * messages/s offered, bench/dispatch started 1,240–1,530 a second and refused 1,700–2,900 of
 * 10,000 as queue_full; with three, 1,520–1,990 a second and none refused. Concurrent batches
 * keep the lock order of every writer (sessions, tasks, agents, users, hosts), as two nodes'
 * batches always did; a session is in one batch at a time.
 */
export const END_BATCHES_IN_FLIGHT = 3;

/**
 * How long a run's end waits for others to share its hub_end_runs call. A call costs PostgreSQL
 * about as much for one end as for several (bench/sql-calls.ts), and at hundreds of ends a second
 * one call per end was a third of the database's CPU per message and competed with the accepts,
 * whose latency a sender waits for (bench/RESULTS.md, sixteenth session). A message for a session
 * whose run end is waiting hurries it (RunTracker.endOf), so the linger delays no message sent to
 * this node; it delays the run's end event, and the start of a message queued behind the run, by
 * at most this.
 */
export const END_LINGER_MS = 5;

export class RunEndWriter {
  /**
   * Run ends arriving within END_LINGER_MS are written with one call (group commit; hub_end_runs is
   * atomic on its own), END_BATCHES_IN_FLIGHT calls at once, each carrying at most
   * RUN_END_BATCH_MAX_BYTES of rows and text.
   */
  private readonly ends = new GroupCommit<EndItem, EndOut | undefined>(() => this.ctx.rawEm(), (em, items) => this.endMany(em, items), (i) => i.st.sessionId, {
    maxInflight: END_BATCHES_IN_FLIGHT, lingerMs: END_LINGER_MS, budget: { sizeOf: (i) => i.bytes, maxBytes: RUN_END_BATCH_MAX_BYTES },
    observe: (w, s) => this.ctx.metrics.runEndBatch(w, s),
  });

  constructor(
    private readonly ctx: HubContext,
    /** The capacity of a host whose channel this node holds (undefined elsewhere): its waiting runs start with the end. */
    private readonly capacityOf: (hostId: string) => number | undefined = () => undefined,
  ) {}

  private em(): Em {
    return this.ctx.em() as unknown as Em;
  }

  /** Writes the run's end, with the others arriving together; undefined when it was ended before (or its session is gone). */
  write(item: EndItem): Promise<EndOut | undefined> {
    return this.ends.submit(item);
  }

  /**
   * Writes the run's end until it lands (retry.ts): a failed write must not leave the session
   * `processing`. An end the database refuses for its data would be refused every time: the next
   * attempt writes it without its output (`withoutOutput`). Answers what was written last, and its result.
   */
  async writeUntilDone(item: EndItem, stopped: () => boolean): Promise<{ written: EndItem; out: EndOut | undefined }> {
    let written = item;
    const out = await retryUntilDone(() => this.write(written).catch((e) => {
      if (refusedAsData(e) && written === item) {
        written = withoutOutput(item.st, item);
        this.ctx.log.warn('run output refused by the database: the run ends without it', { runId: item.st.runId, hostId: item.st.hostId, err: e });
      }
      throw e;
    }), { stopped, log: this.ctx.log, what: 'run end write', fields: { runId: item.st.runId } });
    return { written, out };
  }

  /** Writes the ends waiting for company now: a message waits for one of them. */
  hurry(): void {
    this.ends.hurry();
  }

  /** A run the hub stops itself keeps its slot while its engine may still run on the host (as an abort does). */
  holdSlot(runId: string, graceMs: number): Promise<void> {
    return rows(this.em(), `update session_tasks set engine_until = now() + make_interval(secs => ?) where id = ? and status = 'running'`, [graceMs / 1000, runId])
      .then(() => undefined, (e) => this.ctx.log.warn('run slot not held while its engine stops', { runId, err: e }));
  }

  /**
   * The host's run.end for a run whose end is written already (aborted): its engine is gone, so the run
   * gives its slot of the host's capacity back, and its usage is kept and what it adds charged
   * (billing/charge-function.ts). A failure is logged, the end stands (the slot comes back at engine_until).
   */
  lateEnd(runId: string, u: Usage | undefined): Promise<void> {
    const write = u
      ? rows(this.em(), LATE_USAGE_SQL, [runId, u.inputTokens, u.outputTokens, costOf(u), this.ctx.config.ownerShare])
      : rows(this.em(), `update session_tasks set engine_until = null where id = ? and engine_until is not null`, [runId]);
    return write.then(() => undefined, (e) => this.ctx.log.warn('late run end not recorded', { runId, err: e }));
  }

  /**
   * Ends several runs with one call of hub_end_runs (end-function.ts: the locks, the final status,
   * the last rows, the running slot, the agents' counters, and which hosts have waiting work).
   */
  private async endMany(em: SqlEm, items: EndItem[]): Promise<Array<EndOut | undefined>> {
    const planned = await Promise.all(items.map(async (item) => {
      const { st, end, rows: batch, partial, usage } = item;
      const plan = await planSeqs(em, st, batch);
      const texts = assistantTexts(batch);
      // Every end passes its model: hub_end_runs updates the agent's row anyway, and the last end
      // written is the one that counts (a node's cache of it went stale across nodes and batches).
      const model = st.agentId && st.model ? st.model : null;
      const rowsOut = batch.map((r, i) => rowJson(r, plan.known[i], plan.offset[i]));
      // The turn's streamed text not covered by a complete message: stored only if the run was interrupted.
      // Its content travels once, as `partial` below (end-function.ts), not in the row as well.
      if (partial) rowsOut.push(rowJson(newRow('assistant', { kind: 'text' }, true), null, plan.fresh, true));
      return {
        item, plan,
        json: {
          run: st.runId, sid: st.sessionId, hid: st.hostId, aid: st.agentId || null, engine: st.engine,
          ok: end.ok, aborted: end.aborted === true, tin: usage.inputTokens, tout: usage.outputTokens, cost: costOf(usage), share: this.ctx.config.ownerShare,
          model: st.model ?? null, esid: st.engineSessionId ?? null, ecode: end.error ? engineFailure(end).code : null, emsg: end.error ? engineFailure(end).message : null,
          amodel: model, n: batch.length, texts: texts.count, fresh: plan.fresh, last: texts.last, partial: partial || null, rows: rowsOut,
          b: item.bytes,
        },
      };
    }));
    const caps: Record<string, number> = {};
    for (const { item } of planned) {
      const cap = this.capacityOf(item.st.hostId);
      if (cap !== undefined) caps[item.st.hostId] = cap;
    }
    const res = await this.ctx.metrics.timeDb(this.ctx.metrics.dbEndRuns, () => bound<{ o_run: string | null; o_status: string | null; o_prev: string | null; o_base: string | null; o_waiting_host: string | null; o_claim: ClaimRow[] | null }>(em,
      `select * from hub_end_runs(?::jsonb, ?::jsonb)`, [JSON.stringify(planned.map((p) => p.json)), JSON.stringify(caps)]));
    const ended = new Map(res.filter((r) => r.o_run).map((r) => [r.o_run!, r]));
    const waiting = new Set(res.filter((r) => r.o_waiting_host && !r.o_claim).map((r) => r.o_waiting_host!));
    // Each host's claim goes with the first of its runs that ended here; its other runs report nothing waiting.
    const claims = new Map(res.filter((r) => r.o_waiting_host && r.o_claim).map((r) => [r.o_waiting_host!, claimOf(r.o_claim!)]));
    return planned.map(({ item, plan }) => {
      const r = ended.get(item.st.runId);
      if (!r) return undefined; // ended before, or its session is gone
      const claim = claims.get(item.st.hostId);
      claims.delete(item.st.hostId);
      return {
        evs: rowEvents(item.st, item.rows, plan, Number(r.o_base)),
        publishEnd: r.o_prev === 'running',
        status: r.o_status!,
        waiting: waiting.has(item.st.hostId),
        ...(claim ? { claim } : {}),
      };
    });
  }
}

/** The run's end as it will be written: its rows and streamed text taken out of its state, once. */
export function takeEndItem(st: RunState, end: RunEnd): EndItem {
  const item: EndItem = {
    st, end, rows: st.pending.splice(0), partial: st.partial.text(), usage: end.usage ?? { inputTokens: 0, outputTokens: 0 }, bytes: st.pendingBytes + st.partial.bytes,
  };
  st.partial.clear();
  st.pendingBytes = 0;
  return item;
}

/**
 * Whether PostgreSQL refused the write for its data (SQLSTATE class 22, data exception; 23,
 * integrity constraint, as rows a failed-looking write had in fact committed; or 54, program limit
 * exceeded): the same rows would be refused on every retry.
 */
export function refusedAsData(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23') || code.startsWith('54'));
}

/**
 * The run's end without what its host produced (rows, streamed text, model, engine session): the
 * run fails with HOST_BAD_REPLY and its usage is still charged, so its session is free again.
 */
export function withoutOutput(st: RunState, item: EndItem): EndItem {
  st.model = undefined;
  st.engineSessionId = undefined;
  return {
    st, rows: [], partial: '', usage: item.usage, bytes: 0,
    end: { ...item.end, ok: false, error: { code: 'HOST_BAD_REPLY', message: 'the run\'s output could not be stored: the database refused it' } },
  };
}

/**
 * One line per run end. A failure the engine reported (a run.end frame with an error) is a `warn`
 * carrying the engine's message, bounded and scrubbed: it is the host's text (an engine's stderr may echo its key).
 */
export function logRunEnd(log: Logger, st: RunState, end: RunEnd, status: string): void {
  const f = { runId: st.runId, sessionId: st.sessionId, hostId: st.hostId, engine: st.engine, outcome: status, ms: Date.now() - st.since, inputTokens: end.usage?.inputTokens ?? 0, outputTokens: end.usage?.outputTokens ?? 0 };
  if (status === 'completed' || status === 'aborted') return log.info('run ended', f);
  const failure = { ...f, ...engineFailure(end) };
  if (st.hostEnded) log.warn('run failed: engine error', failure);
  else log.info('run failed', failure);
}
