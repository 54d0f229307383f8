// Sending a message (persist + queue rule + dispatch), abort, and the queue
// endpoints. The 202 answer is decided inside the transaction that writes the
// message and its task; run.start goes out only after that commit.
import type { HubContext } from '../context.js';
import { fail } from '../errors.js';
import type { HostGateway } from '../hosts/gateway.js';
import { resolveUsableAgent, requireMode, type UsableAgent } from '../agents/usage.js';
import { acceptIn, acceptManyIn, BATCH_LOCK_WAIT_MS, discardWaiting, type AcceptInput, type Accepted, type QueueReason } from './queue.js';
import { GroupCommit } from './group.js';
import { ACCEPT_BATCH_MAX_BYTES } from '../limits.js';
import { one, rows, tx, type Em } from './sql.js';
import type { Scheduler } from './scheduler.js';
import type { RunTracker } from './runs.js';
import type { SessionEvents } from './events.js';
import type { AccountStorage } from './account-storage.js';

export interface SendOptions {
  effort?: string;
  permissionMode?: string;
}

/** The spec's plain 202 body. */
export interface SendBody {
  sessionId: string;
  status: 'processing' | 'queued';
  taskId: string;
  queueReason?: QueueReason;
}

export interface SendResult {
  body: SendBody;
  queued: boolean;
}

/** Used when the session is created in the same transaction as its first message. */
export interface NewSession {
  agent: UsableAgent;
  prepare(em: Em): Promise<void>;
  record?(em: Em, body: SendBody): Promise<void>;
  beforeDispatch?(sessionId: string): void;
}

const OWNER_CACHE = 100_000;
/**
 * Longest a message waits for its session's run end being written on this node. A write takes a few
 * milliseconds, tens under load; one held longer (a lock, the database away) leaves the message to
 * queue as before, and the end's claim starts it.
 */
export const END_WAIT_MS = 200;

/** Settles when `p` does or after `ms`, whichever comes first. */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => undefined, () => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

export class Messaging {
  constructor(
    private readonly ctx: HubContext,
    private readonly gateway: HostGateway,
    private readonly scheduler: Scheduler,
    private readonly runs: RunTracker,
    private readonly events: SessionEvents,
    private readonly storage: AccountStorage,
  ) {}

  private em(): Em {
    return this.ctx.em() as unknown as Em;
  }

  // One call of hub_accept per batch: atomic on its own, so no transaction around it. A batch's
  // contents are bounded in bytes (ACCEPT_BATCH_MAX_BYTES) as well as in count.
  private readonly groups = new GroupCommit<AcceptInput, Accepted>(() => this.ctx.rawEm(), (em, items, alone) => this.ctx.metrics.timeDb(this.ctx.metrics.dbAccept, () => acceptManyIn(em, items, alone ? null : BATCH_LOCK_WAIT_MS)), (a) => a.sessionId, {
    budget: { sizeOf: (a) => a.content.length * 6, maxBytes: ACCEPT_BATCH_MAX_BYTES }, observe: (w, s) => this.ctx.metrics.acceptBatch(w, s),
  });

  /** sessionId → its owner and agent: facts that never change, so sends skip a lookup. */
  /** A run on another account's agent is charged at most the balance it finds: the tokens that must back it (billing/charge-function.ts). */
  private guestFloor(a: UsableAgent, userId: string): number {
    return a.ownerId === userId ? 0 : this.ctx.config.guestRunMinBalance;
  }

  private owners = new Map<string, { userId: string; agentId: string }>();

  private agentOf(userId: string, sessionId: string): string | Promise<string> {
    const hit = this.owners.get(sessionId);
    return hit && hit.userId === userId ? hit.agentId : this.agentOfStored(userId, sessionId);
  }

  private async agentOfStored(userId: string, sessionId: string): Promise<string> {
    const s = await one<{ agent_id: string }>(this.em(), `select agent_id from sessions where id = ? and user_id = ?`, [sessionId, userId]);
    if (!s) throw fail('NOT_FOUND', 'session not found');
    if (this.owners.size >= OWNER_CACHE) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(sessionId, { userId, agentId: s.agent_id });
    return s.agent_id;
  }

  async send(userId: string, sessionId: string, content: string, options: SendOptions, fresh?: NewSession, beforeDispatch?: (sessionId: string) => void): Promise<SendResult> {
    // A deleted session is caught by hub_accept (404) even when the owners cache still knows it.
    // A hot send takes its facts from memory in this turn: values, not promises, where they are known
    // (every await is a promise, and every promise pays Node 20's hooks once MikroORM has run).
    let agent: UsableAgent;
    if (fresh) agent = fresh.agent;
    else {
      const agentId = this.agentOf(userId, sessionId);
      const usable = resolveUsableAgent(this.ctx, userId, agentId instanceof Promise ? await agentId : agentId);
      agent = usable instanceof Promise ? await usable : usable;
    }
    if (!agent.hostId || !agent.engine) throw fail('AGENT_UNUSABLE', 'the agent has no host or engine');
    requireMode(agent, userId, options.permissionMode); // 403 above the owner's ceiling, before anything is stored
    // The channel held here knows the capacity; another node's host is read from presence at most once a moment.
    const known = this.gateway.presenceToSend(agent.hostId);
    const presence = known instanceof Promise ? await known : known;
    // Nothing is stored: a 503 means "do not assume the task ran", and a retry must not duplicate it.
    if (presence.status === 'offline') throw fail('UNAVAILABLE', 'the agent\'s host is offline');
    // Read from the store: the node holding the channel, where run.start goes without reading presence again.
    const via = presence.nodeId;
    const a = agent;
    if (!fresh) {
      const room = this.storage.onMessage(userId); // 409 when the account's sessions hold its bound
      if (room) await room;
      // The session's run is over but its end is still being written here: the message waits for that
      // write (bounded), so it starts now instead of queueing behind a run that has ended.
      const ending = this.runs.endOf(sessionId);
      if (ending) await within(ending, END_WAIT_MS);
      // The common case goes through the group commit: one hub_accept call for the accepts of a burst.
      const acc = await this.groups.submit({
        sessionId, userId, agentId: a.id, hostId: a.hostId, engine: a.engine, workDir: a.workDir, capacity: presence.capacity, content,
        mode: options.permissionMode, effort: options.effort, guestFloor: this.guestFloor(a, userId), sessionMaxBytes: this.ctx.config.sessionStoredMaxBytes,
      });
      if (acc.claimed) {
        acc.claimed.acceptedAt = performance.now();
        acc.claimed.via = via;
        beforeDispatch?.(sessionId);
        await this.scheduler.dispatch(acc.claimed);
      } else if (acc.queueReason === 'host_capacity') void this.scheduler.drain(a.hostId); // a run may have ended while this accept counted
      const body: SendBody = acc.queueReason
        ? { sessionId, status: 'queued', taskId: acc.taskId, queueReason: acc.queueReason }
        : { sessionId, status: 'processing', taskId: acc.taskId };
      return { body, queued: body.status === 'queued' };
    }
    const out = await tx(this.em(), async (t) => {
      if (fresh) await fresh.prepare(t);
      const acc = await this.ctx.metrics.timeDb(this.ctx.metrics.dbAccept, () => acceptIn(t, {
        sessionId, userId, agentId: a.id, hostId: a.hostId, engine: a.engine, workDir: a.workDir, capacity: presence.capacity, content,
        mode: options.permissionMode, effort: options.effort, guestFloor: this.guestFloor(a, userId), sessionMaxBytes: this.ctx.config.sessionStoredMaxBytes,
      }));
      const b: SendBody = acc.queueReason
        ? { sessionId, status: 'queued', taskId: acc.taskId, queueReason: acc.queueReason }
        : { sessionId, status: 'processing', taskId: acc.taskId };
      if (fresh?.record) await fresh.record(t, b);
      return { b, claimed: acc.claimed };
    });
    if (out.claimed) {
      out.claimed.acceptedAt = performance.now(); // committed with the transaction
      out.claimed.via = via;
      (fresh?.beforeDispatch ?? beforeDispatch)?.(sessionId);
      await this.scheduler.dispatch(out.claimed);
    } else if (out.b.queueReason === 'host_capacity') void this.scheduler.drain(a.hostId);
    const body = out.b;
    return { body, queued: body.status === 'queued' };
  }

  /** The session is gone: drop what this node remembers of it. */
  forget(sessionId: string): void {
    this.owners.delete(sessionId);
  }

  /** Stops the running turn (if any) and discards every waiting message. Idempotent. */
  async abort(userId: string, sessionId: string): Promise<{ sessionId: string; status: 'aborted' }> {
    const out = await tx(this.em(), async (t) => {
      const s = await one<{ running_task_id: string | null }>(t, `select running_task_id from sessions where id = ? and user_id = ? for no key update`, [sessionId, userId]);
      if (!s) throw fail('NOT_FOUND', 'session not found');
      const discarded = await discardWaiting(t, sessionId);
      let running: { id: string; host_id: string; agent_id: string; engine: string } | undefined;
      if (s.running_task_id) {
        // Its engine stops on the host only later: until the host's run.end (or the grace) it keeps its slot.
        running = await one(t,
          `update session_tasks set status = 'aborted', engine_until = now() + make_interval(secs => ?) where id = ? and status = 'running' returning id, host_id, agent_id, engine`,
          [this.ctx.config.engineStopGraceMs / 1000, s.running_task_id]);
        await rows(t, `update sessions set running_task_id = null, updated_at = now() where id = ?`, [sessionId]);
      }
      return { running, discarded };
    });
    if (out.running) {
      const { id: runId, host_id: hostId, agent_id: agentId, engine } = out.running;
      this.events.emit(sessionId, runId, 'run.error', { status: 'aborted', code: 'ABORTED', message: 'the run was aborted' }, { last: true });
      await this.gateway.send(hostId, { t: 'run.abort', runId }).catch(() => undefined); // offline: nothing left to stop
      // The run's end is written here when this node tracks the run, or when its channel is on another node
      // (which writes nothing more for it: the end is written once).
      if (this.runs.isLocal(runId) || this.gateway.heldCapacity(hostId) === undefined) {
        await this.runs.end(runId, { ok: false, aborted: true }, { sessionId, hostId, agentId, engine });
      }
      void this.scheduler.drain(hostId);
      // A host that never reports the engine gone gets the slot back at the grace's end: drain it then.
      setTimeout(() => void this.scheduler.drain(hostId), this.ctx.config.engineStopGraceMs + 50).unref();
    }
    return { sessionId, status: 'aborted' };
  }

  async queue(userId: string, sessionId: string) {
    const s = await one(this.em(), `select id from sessions where id = ? and user_id = ?`, [sessionId, userId]);
    if (!s) throw fail('NOT_FOUND', 'session not found');
    const items = await rows(this.em(),
      `select t.id, t.message_id, t.queue_reason, t.created_at, m.content from session_tasks t join session_messages m on m.id = t.message_id
       where t.session_id = ? and t.status = 'queued' order by t.n`, [sessionId]);
    return {
      items: items.map((r, i) => ({ taskId: r.id, messageId: r.message_id, content: r.content, queueReason: r.queue_reason, position: i + 1, createdAt: new Date(r.created_at).toISOString() })),
      total: items.length,
    };
  }

  /** Cancels one waiting message without touching the running turn. */
  async cancelQueued(userId: string, sessionId: string, taskId: string) {
    const n = await tx(this.em(), async (t) => {
      const s = await one(t, `select id from sessions where id = ? and user_id = ? for no key update`, [sessionId, userId]);
      if (!s) throw fail('NOT_FOUND', 'session not found');
      return discardWaiting(t, sessionId, taskId);
    });
    if (!n) throw fail('NOT_FOUND', 'no such waiting message');
    return { taskId, cancelled: true };
  }
}
