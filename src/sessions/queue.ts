// The queue rule in SQL. A user message and its run task are written in one
// transaction; a task is claimed for a host under the host row's lock with
// `FOR UPDATE SKIP LOCKED`, so two hub nodes never start one task and a host
// never gets more runs than its capacity.
import { fail } from '../errors.js';
import { newId } from '../ids.js';
import { rows, one, marks, type Em } from './sql.js';

/** At most this many messages wait per session (the spec's queue rule). */
export const MAX_WAITING = 10;

export type QueueReason = 'session_busy' | 'host_capacity';

export interface AcceptInput {
  sessionId: string;
  userId: string;
  agentId: string;
  hostId: string;
  engine: string;
  workDir: string;
  capacity: number;
  content: string;
  /** Overrides of this run only (options.permissionMode / options.effort); else the session's. */
  mode?: string;
  effort?: string;
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
export interface ClaimedTask {
  id: string;
  sessionId: string;
  userId: string;
  agentId: string;
  hostId: string;
  engine: string;
  workDir: string;
  prompt: string;
  resume?: string;
  mode: string;
  effort?: string;
}

/**
 * Runs inside the caller's transaction: persists the user message and its
 * task, claimed or queued. Locks the session row, then (only when the message
 * could run now) the host row: the claim side takes the host first but never
 * waits for a session (SKIP LOCKED), so the two orders cannot deadlock.
 */
export async function acceptIn(em: Em, a: AcceptInput): Promise<Accepted> {
  const s = await one<{ running_task_id: string | null; engine_session_id: string | null; mode: string; effort: string; waiting: string }>(em,
    `select s.running_task_id, s.engine_session_id, s.mode, s.effort,
            (select count(*) from session_tasks t where t.session_id = s.id and t.status = 'queued') as waiting
       from sessions s where s.id = ? and s.user_id = ? for update`, [a.sessionId, a.userId]);
  if (!s) throw fail('NOT_FOUND', 'session not found');
  const waiting = Number(s.waiting);
  let reason: QueueReason | undefined;
  if (s.running_task_id) reason = 'session_busy';
  else if (waiting > 0) reason = 'host_capacity'; // earlier messages of this session wait for the host: keep the order
  else {
    // Lock, then count in a second statement: under READ COMMITTED a count in the locking statement
    // uses the snapshot taken before the wait, missing the runs the previous lock holder committed.
    const locked = await one(em, `select id from hosts where id = ? for update`, [a.hostId]);
    if (!locked) throw fail('AGENT_UNUSABLE', 'the agent has no host');
    const h = (await one<{ running: string }>(em, `select count(*) as running from session_tasks where host_id = ? and status = 'running'`, [a.hostId]))!;
    if (Number(h.running) >= a.capacity) reason = 'host_capacity';
  }
  if (reason && waiting >= MAX_WAITING) throw fail('QUEUE_FULL');
  const mode = a.mode ?? s.mode;
  const effort = a.effort ?? s.effort;

  const taskId = newId('run');
  const messageId = newId('msg');
  // One statement: bump the session, insert the message with the next seq, insert the task.
  await rows(em,
    `with s as (update sessions set next_seq = next_seq + 1, message_count = message_count + 1, last_message = ?,
        last_msg_at = now(), last_active_at = now(), updated_at = now()${reason ? '' : ', running_task_id = ?'}
        where id = ? returning next_seq - 1 as seq),
     m as (insert into session_messages (id, session_id, task_id, role, kind, content, seq, provider)
       select ?, ?, ?, 'user', 'text', ?, s.seq, ? from s returning id)
     insert into session_tasks (id, session_id, user_id, agent_id, host_id, engine, work_dir, message_id, status, queue_reason, mode, effort, started_at)
       select ?, ?, ?, ?, ?, ?, ?, m.id, ?, ?, ?, ?, ${reason ? 'null' : 'now()'} from m`,
    [a.content.slice(0, 500), ...(reason ? [] : [taskId]), a.sessionId, messageId, a.sessionId, taskId, a.content, a.engine,
      taskId, a.sessionId, a.userId, a.agentId, a.hostId, a.engine, a.workDir, reason ? 'queued' : 'running', reason ?? null, mode, effort]);
  if (reason) return { taskId, messageId, queueReason: reason };
  return {
    taskId, messageId,
    claimed: { id: taskId, sessionId: a.sessionId, userId: a.userId, agentId: a.agentId, hostId: a.hostId, engine: a.engine, workDir: a.workDir, prompt: a.content, resume: s.engine_session_id ?? undefined, mode, effort },
  };
}

const CLAIM_COLUMNS = `t.id, t.session_id, t.user_id, t.agent_id, t.host_id, t.engine, t.work_dir, t.mode, t.effort,
  m.content as prompt, s.engine_session_id`;

function claimed(r: any): ClaimedTask {
  return {
    id: r.id, sessionId: r.session_id, userId: r.user_id, agentId: r.agent_id, hostId: r.host_id, engine: r.engine,
    workDir: r.work_dir, prompt: r.prompt ?? '', resume: r.engine_session_id ?? undefined, mode: r.mode, effort: r.effort ?? undefined,
  };
}

/** Claims the next runnable tasks of a host (oldest first, one per idle session), up to its free capacity. */
export async function claimForHost(em: Em, hostId: string, capacity: number): Promise<{ tasks: ClaimedTask[]; skipped: boolean }> {
  const none = { tasks: [], skipped: false };
  // Lock, then count in a second statement (a fresh snapshot that sees the previous holder's claims; see acceptIn).
  if (!(await one(em, `select id from hosts where id = ? for update`, [hostId]))) return none;
  const host = (await one<{ running: string }>(em, `select count(*) as running from session_tasks where host_id = ? and status = 'running'`, [hostId]))!;
  let free = capacity - Number(host.running);
  if (free <= 0) return none;
  const candidates = await rows<{ id: string; session_id: string }>(em,
    `select t.id, t.session_id from session_tasks t join sessions s on s.id = t.session_id
      where t.host_id = ? and t.status = 'queued' and s.running_task_id is null order by t.n limit ? for update of t skip locked`,
    [hostId, Math.min(200, free * 20)]);
  const seen = new Set<string>();
  const ids: string[] = [];
  let skipped = false;
  for (const c of candidates) {
    if (free <= 0) break;
    if (seen.has(c.session_id)) continue; // only the oldest waiting message of a session may start
    seen.add(c.session_id);
    // SKIP LOCKED here too: a session locked by an abort or a run's end is drained again after that commits.
    const won = await rows(em,
      `update sessions set running_task_id = ? where id = (select id from sessions where id = ? and running_task_id is null for update skip locked) returning id`,
      [c.id, c.session_id]);
    if (!won.length) {
      skipped = true; // locked by a concurrent change (or it just started a run): look again shortly
      continue;
    }
    ids.push(c.id);
    free--;
  }
  if (!ids.length) return { tasks: [], skipped };
  const out = await rows(em,
    `with t as (update session_tasks set status = 'running', started_at = now() where id in (${marks(ids.length)}) returning *)
     select ${CLAIM_COLUMNS} from t join session_messages m on m.id = t.message_id join sessions s on s.id = t.session_id order by t.n`,
    ids);
  return { tasks: out.map(claimed), skipped };
}

/** Cancels every waiting task of a session and deletes their user messages; returns how many. */
export async function discardWaiting(em: Em, sessionId: string, taskId?: string): Promise<number> {
  const gone = await rows<{ message_id: string }>(em,
    `update session_tasks set status = 'cancelled', ended_at = now() where session_id = ? and status = 'queued'${taskId ? ' and id = ?' : ''} returning message_id`,
    taskId ? [sessionId, taskId] : [sessionId]);
  if (!gone.length) return 0;
  await rows(em, `delete from session_messages where id in (${marks(gone.length)})`, gone.map((g) => g.message_id));
  await rows(em,
    `update sessions set message_count = greatest(0, message_count - ?),
       last_message = (select content from session_messages where session_id = ? and kind = 'text' order by n desc limit 1),
       updated_at = now() where id = ?`, [gone.length, sessionId, sessionId]);
  return gone.length;
}
