// The queue rule in SQL. A user message and its run task are written in one
// transaction (hub_accept, accept-function.ts); a waiting task is claimed for
// a host under the host row's lock with `SKIP LOCKED` on tasks and sessions,
// so two hub nodes never start one task and a host never gets more runs than
// its capacity.
import { fail, HubError } from '../errors.js';
import { timeOrderedId } from '../ids.js';
import { bound, rows, one, marks, type Em, type SqlEm } from './sql.js';
import { RETRY } from './group.js';

/** At most this many messages wait per session (the spec's queue rule). */
export const MAX_WAITING = 10;

/**
 * How long a batch waits for the lock of a session hub_accept skipped once. The hub holds a
 * session's lock for one statement (a run's end, another node's accept) or a short transaction
 * (an abort, a cancel), far less than this; a lock held longer makes the message wait alone
 * (group.ts), not the node's batches.
 */
export const BATCH_LOCK_WAIT_MS = 100;

export type QueueReason = 'session_busy' | 'host_capacity';

/** Where a message's run goes: its session, owner, agent and the agent's host, engine and directory. */
export interface RunPlace {
  sessionId: string;
  userId: string;
  agentId: string;
  hostId: string;
  engine: string;
  workDir: string;
}

export interface AcceptInput extends RunPlace {
  capacity: number;
  content: string;
  /** Tokens that must back this run (a run on another account's agent: config guestRunMinBalance); 0 on one's own agent. */
  guestFloor: number;
  /** The most the session may store (sessions.stored_bytes with this message); 0 or absent: no bound. */
  sessionMaxBytes?: number;
  /** Overrides of this run only (options.permissionMode / options.effort); else the session's. */
  mode?: string;
  effort?: string;
  /** Wait for the session's lock (set once hub_accept skipped it; how long: acceptManyIn's lockWaitMs). */
  lockWait?: boolean;
}

export interface Accepted {
  taskId: string;
  messageId: string;
  /** Set when the message waits; otherwise the task was claimed in the same transaction. */
  queueReason?: QueueReason;
  /** The claimed task, ready for run.start (when not queued). */
  claimed?: ClaimedTask;
}

/** A claimed task with everything run.start needs. */
export interface ClaimedTask extends RunPlace {
  id: string;
  prompt: string;
  resume?: string;
  mode: string;
  effort?: string;
  /** performance.now() when the accept that claimed it committed (the dispatch latency metric); unset for a task claimed from the queue. */
  acceptedAt?: number;
  /** The node that held the host's channel when the message's presence was read (gateway `send`'s `via`). */
  via?: string;
}

/**
 * Persists one user message and its task, claimed or queued, inside the
 * caller's transaction (a session created with its first message). See
 * accept-function.ts for the rule and its locks.
 */
export async function acceptIn(em: Em, a: AcceptInput): Promise<Accepted> {
  const [r] = await acceptManyIn(em, [{ ...a, lockWait: true }], null);
  if (r instanceof HubError) throw r;
  if (r === RETRY) throw new Error('acceptIn: skipped though it waits for its lock');
  return r;
}

/** What hub_accept answers per message (accept-function.ts). */
type Outcome = 'running' | 'session_busy' | 'host_capacity' | 'not_found' | 'session_full' | 'no_balance' | 'guest_floor' | 'no_host' | 'queue_full' | 'retry';

/**
 * Accepts several messages, each of another session, in one call of the
 * database function hub_accept (accept-function.ts holds the rule and its
 * locks): in the caller's transaction when there is one, else as its own.
 * Each message gets its own answer or its own error (a refused one writes
 * nothing and does not spoil the others). A message whose session another transaction held locked
 * is answered RETRY (nothing written) and marked to wait for the lock the next time: for at most
 * `lockWaitMs` (answered RETRY again if still held), or as long as it takes when null.
 */
export async function acceptManyIn(em: SqlEm, items: AcceptInput[], lockWaitMs: number | null): Promise<Array<Accepted | HubError | typeof RETRY>> {
  if (new Set(items.map((a) => a.sessionId)).size !== items.length) throw new Error('acceptManyIn: one message per session per batch');
  const planned = items.map((a, ord) => ({ a, ord, taskId: timeOrderedId('run'), messageId: timeOrderedId('msg') }));
  const batch = planned.map(({ a, ord, taskId, messageId }) => ({
    ord, sid: a.sessionId, uid: a.userId, tid: taskId, mid: messageId, content: a.content, hid: a.hostId, cap: a.capacity,
    aid: a.agentId, engine: a.engine, wd: a.workDir, mode: a.mode ?? null, effort: a.effort ?? null, wait: a.lockWait === true, gmin: a.guestFloor,
    smax: a.sessionMaxBytes ?? 0,
  }));
  const answers = new Map((await bound<{ o_ord: number; o_outcome: Outcome; o_engine_session_id: string | null; o_mode: string; o_effort: string | null }>(em,
    `select * from hub_accept(?::jsonb, ?, ?)`, [JSON.stringify(batch), MAX_WAITING, lockWaitMs])).map((r) => [r.o_ord, r]));
  return planned.map(({ a, ord, taskId, messageId }) => {
    const r = answers.get(ord);
    switch (r?.o_outcome) {
      case 'running':
        return {
          taskId, messageId,
          claimed: {
            id: taskId, sessionId: a.sessionId, userId: a.userId, agentId: a.agentId, hostId: a.hostId, engine: a.engine, workDir: a.workDir,
            prompt: a.content, resume: r.o_engine_session_id ?? undefined, mode: r.o_mode, effort: r.o_effort ?? undefined,
          },
        };
      case 'session_busy':
      case 'host_capacity':
        return { taskId, messageId, queueReason: r.o_outcome };
      case 'retry':
        a.lockWait = true;
        return RETRY;
      case 'no_host':
        return fail('AGENT_UNUSABLE', 'the agent has no host');
      case 'queue_full':
        return fail('QUEUE_FULL');
      case 'session_full':
        return fail('CONFLICT', `this session holds the most a session may store (${Math.floor((a.sessionMaxBytes ?? 0) / 1048576)} MiB of messages and output): start a new session`);
      case 'no_balance':
        return fail('INSUFFICIENT_BALANCE', 'your token balance is used up: buy a token pack or a plan to send messages');
      case 'guest_floor':
        return fail('INSUFFICIENT_BALANCE', `each run on another account's agent needs ${a.guestFloor} tokens of your balance behind it, running or waiting: wait for one to end, or buy a token pack or a plan`);
      default:
        return fail('NOT_FOUND', 'session not found');
    }
  });
}

const CLAIM_COLUMNS = `t.id, t.session_id, t.user_id, t.agent_id, t.host_id, t.engine, t.work_dir, t.mode, t.effort,
  m.content as prompt, s.engine_session_id`;

function claimed(r: any): ClaimedTask {
  return {
    id: r.id, sessionId: r.session_id, userId: r.user_id, agentId: r.agent_id, hostId: r.host_id, engine: r.engine,
    workDir: r.work_dir, prompt: r.prompt ?? '', resume: r.engine_session_id ?? undefined, mode: r.mode, effort: r.effort ?? undefined,
  };
}

/** Claimed tasks read again, with what run.start needs (a run.start that never reached its host). */
export async function readClaimed(em: Em, ids: string[]): Promise<ClaimedTask[]> {
  if (!ids.length) return [];
  const r = await rows(em,
    `select ${CLAIM_COLUMNS} from session_tasks t join sessions s on s.id = t.session_id join session_messages m on m.id = t.message_id
      where t.id in (${marks(ids.length)}) and t.status = 'running' and t.ended_at is null`, ids);
  return r.map(claimed);
}

/**
 * Claims the next runnable tasks of a host (oldest first, one per idle session), up to its free capacity,
 * in one call of hub_claim (claim-function.ts holds the rule and its locks); in autocommit, so the host
 * row is locked for that call only. A message of a user whose balance ran out while it waited is not
 * started: it waits (the next drain after a top-up starts it), or its sender cancels it. Nothing starts
 * while the host's settings lease is held (hosts/settings-lease.ts): `leaseMs` says how long it still lasts.
 */
export async function claimForHost(em: Em, hostId: string, capacity: number): Promise<Claim> {
  return claimOf(await bound<ClaimRow>(em, `select * from hub_claim(?, ?)`, [hostId, capacity]));
}

/** What a claim of one host gave: the tasks started, whether a picked session was skipped (locked), the settings lease. */
export interface Claim {
  tasks: ClaimedTask[];
  skipped: boolean;
  leaseMs?: number;
}

/** A row of hub_claim (claim-function.ts). */
export type ClaimRow = { o_kind: 'meta' | 'task'; o_lease_ms: number | null; o_picked: number | null } & Record<string, any>;

/** hub_claim's rows → the claim (also as hub_end_runs returns them, claimed inside it: end-function.ts). */
export function claimOf(out: ClaimRow[]): Claim {
  const meta = out.find((r) => r.o_kind === 'meta');
  if (meta?.o_lease_ms != null && meta.o_lease_ms > 0) return { tasks: [], skipped: false, leaseMs: meta.o_lease_ms };
  const tasks = out.filter((r) => r.o_kind === 'task').map(claimed);
  return { tasks, skipped: tasks.length < Number(meta?.o_picked ?? 0) };
}

/** Cancels every waiting task of a session (or one): deletes them and their user messages; returns how many. */
export async function discardWaiting(em: Em, sessionId: string, taskId?: string): Promise<number> {
  // The task goes with its message: it never ran, nothing else names it, and a row kept per cancelled
  // message (with its copy of the agent's work directory) let send-then-cancel grow a session without bound.
  const gone = await rows<{ message_id: string }>(em,
    `delete from session_tasks where session_id = ? and status = 'queued'${taskId ? ' and id = ?' : ''} returning message_id`,
    taskId ? [sessionId, taskId] : [sessionId]);
  if (!gone.length) return 0;
  const [del] = await rows<{ n: string }>(em,
    `with d as (delete from session_messages where id in (${marks(gone.length)}) returning octet_length(content) as n)
     select coalesce(sum(n), 0)::bigint as n from d`, gone.map((g) => g.message_id));
  await rows(em,
    `update sessions set message_count = greatest(0, message_count - ?), stored_bytes = greatest(0, stored_bytes - ?),
       last_message = (select content from session_messages where session_id = ? and kind = 'text' order by n desc limit 1),
       updated_at = now() where id = ?`, [gone.length, Number(del?.n ?? 0), sessionId, sessionId]);
  return gone.length;
}
