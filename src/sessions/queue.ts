// The queue rule in SQL. A user message and its run task are written in one
// transaction; a task is claimed for a host under the host row's lock with
// `FOR UPDATE SKIP LOCKED`, so two hub nodes never start one task and a host
// never gets more runs than its capacity.
import { fail, HubError } from '../errors.js';
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
 * task, claimed or queued. See acceptManyIn for the locks.
 */
export async function acceptIn(em: Em, a: AcceptInput): Promise<Accepted> {
  const [r] = await acceptManyIn(em, [a]);
  if (r instanceof HubError) throw r;
  return r;
}

type SessionRow = { id: string; user_id: string; running_task_id: string | null; engine_session_id: string | null; mode: string; effort: string };

/**
 * Accepts several messages, each of another session, in the caller's
 * transaction (group commit), in order; each gets its own answer or its own
 * error (decided before anything is written, so one refusal does not spoil
 * the others). Three statements whatever the batch size: lock the sessions
 * (sorted by id); lock the hosts of those that could run now (sorted by id)
 * and count their waiting messages; write every message and task in one
 * statement that also decides which may start. All accepts take locks in
 * that one order and the claim side takes a host but never waits for a
 * session (SKIP LOCKED), so none can deadlock.
 */
export async function acceptManyIn(em: Em, items: AcceptInput[]): Promise<Array<Accepted | HubError>> {
  const sids = [...new Set(items.map((a) => a.sessionId))].sort();
  if (sids.length !== items.length) throw new Error('acceptManyIn: one message per session per batch');
  const found = new Map((await rows<SessionRow>(em,
    `select id, user_id, running_task_id, engine_session_id, mode, effort from sessions where id in (${marks(sids.length)}) order by id for no key update`, sids)).map((r) => [r.id, r]));
  // Hosts of the sessions that could run now, locked in a later statement than the sessions; the
  // waiting counts in it are exact because only holders of a session's lock change its queue.
  const hids = [...new Set(items.filter((a) => found.get(a.sessionId) && !found.get(a.sessionId)!.running_task_id).map((a) => a.hostId))].sort();
  const mine = sids.filter((id) => found.has(id));
  const counted = mine.length || hids.length ? await rows<{ k: string; id: string; n: string }>(em,
    `${hids.length ? `with h as (select id from hosts where id in (${marks(hids.length)}) order by id for no key update) select 'h' as k, id, 0 as n from h` : `select 'h' as k, '' as id, 0 as n where false`}
     union all select 'w' as k, session_id as id, count(*) as n from session_tasks where session_id in (${mine.length ? marks(mine.length) : 'null'}) and status = 'queued' group by session_id`,
    [...hids, ...mine]) : [];
  const hosts = new Set(counted.filter((r) => r.k === 'h').map((r) => r.id));
  const waiting = new Map(counted.filter((r) => r.k === 'w').map((r) => [r.id, Number(r.n)]));
  const out: Array<Accepted | HubError | Planned> = items.map((a) => {
    const s = found.get(a.sessionId);
    if (!s || s.user_id !== a.userId) return fail('NOT_FOUND', 'session not found');
    const w = waiting.get(a.sessionId) ?? 0;
    let reason: QueueReason | undefined;
    if (s.running_task_id) reason = 'session_busy';
    else if (w > 0) reason = 'host_capacity'; // earlier messages of this session wait for the host: keep the order
    else if (!hosts.has(a.hostId)) return fail('AGENT_UNUSABLE', 'the agent has no host');
    if (reason && w >= MAX_WAITING) return fail('QUEUE_FULL');
    return { a, s, reason, taskId: newId('run'), messageId: newId('msg'), mode: a.mode ?? s.mode, effort: a.effort ?? s.effort };
  });
  const plans = out.filter((o): o is Planned => !(o instanceof HubError) && 'a' in o);
  if (!plans.length) return out as Array<Accepted | HubError>;
  const started = await insertMany(em, plans);
  return out.map((o) => {
    if (o instanceof HubError || !('a' in o)) return o;
    const { a, s, taskId, messageId, mode, effort } = o;
    if (!started.has(taskId)) return { taskId, messageId, queueReason: o.reason ?? 'host_capacity' };
    return {
      taskId, messageId,
      claimed: { id: taskId, sessionId: a.sessionId, userId: a.userId, agentId: a.agentId, hostId: a.hostId, engine: a.engine, workDir: a.workDir, prompt: a.content, resume: s.engine_session_id ?? undefined, mode, effort },
    };
  });
}

/** A message that will be written: its ids, and its reason to wait when one is already known. */
interface Planned {
  a: AcceptInput;
  s: SessionRow;
  reason: QueueReason | undefined;
  taskId: string;
  messageId: string;
  mode: string;
  effort: string;
}

/**
 * One statement for the whole batch: decides which messages start (those with no reason to wait,
 * in order, while their host has room), bumps each session, inserts the messages with the next seq
 * and their tasks, running or queued. Returns the ids of the tasks that started.
 */
async function insertMany(em: Em, plans: Planned[]): Promise<Set<string>> {
  const params: unknown[] = [];
  const values = plans.map((p, i) => {
    const { a } = p;
    params.push(i, a.sessionId, p.taskId, p.messageId, a.content, a.content.slice(0, 500), p.reason === undefined, p.reason ?? null,
      a.hostId, a.capacity, a.userId, a.agentId, a.engine, a.workDir, p.mode, p.effort);
    return '(?::int, ?::text, ?::text, ?::text, ?::text, ?::text, ?::boolean, ?::text, ?::text, ?::int, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text)';
  });
  // Lock, then count in a later statement: under READ COMMITTED a count in the locking statement
  // uses the snapshot taken before the wait, missing the runs the previous lock holder committed.
  // This statement's snapshot starts after the host locks are held.
  const r = await rows<{ id: string }>(em,
    `with v(ord, sid, tid, mid, content, last, cand, reason, host_id, cap, user_id, agent_id, engine, work_dir, mode, effort) as (values ${values.join(', ')}),
     r as (select host_id, count(*) as running from session_tasks where status = 'running' and host_id in (select host_id from v where cand) group by host_id),
     d as (select v.*, v.cand and coalesce(r.running, 0) + row_number() over (partition by v.host_id, v.cand order by v.ord) <= v.cap as go
        from v left join r on r.host_id = v.host_id),
     s as (update sessions s set next_seq = s.next_seq + 1, message_count = s.message_count + 1, last_message = d.last,
        last_msg_at = now(), last_active_at = now(), updated_at = now(),
        running_task_id = case when d.go then d.tid else s.running_task_id end
        from d where s.id = d.sid returning s.id, s.next_seq - 1 as seq),
     m as (insert into session_messages (id, session_id, task_id, role, kind, content, seq, provider)
       select d.mid, d.sid, d.tid, 'user', 'text', d.content, s.seq, d.engine from d join s on s.id = d.sid order by d.ord returning id),
     t as (insert into session_tasks (id, session_id, user_id, agent_id, host_id, engine, work_dir, message_id, status, queue_reason, mode, effort, started_at)
       select d.tid, d.sid, d.user_id, d.agent_id, d.host_id, d.engine, d.work_dir, d.mid, case when d.go then 'running' else 'queued' end,
              case when d.go then null else coalesce(d.reason, 'host_capacity') end, d.mode, d.effort, case when d.go then now() else null end
         from d join m on m.id = d.mid order by d.ord
       returning id, status)
     select id from t where status = 'running'`,
    params);
  return new Set(r.map((x) => x.id));
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
  // Lock, then count in a later statement (a fresh snapshot that sees the previous holder's claims; see acceptIn).
  if (!(await one(em, `select id from hosts where id = ? for no key update`, [hostId]))) return none;
  // One statement: the host's running count and the oldest waiting tasks of its idle sessions.
  const candidates = await rows<{ id: string; session_id: string; running: string }>(em,
    `with c as (select count(*) as running from session_tasks where host_id = ? and status = 'running')
     select t.id, t.session_id, (select running from c) as running from session_tasks t join sessions s on s.id = t.session_id
      where t.host_id = ? and t.status = 'queued' and s.running_task_id is null
        and (select running from c) < ?
      order by t.n limit least(200, greatest(0, ? - (select running from c)) * 20) for no key update of t skip locked`,
    [hostId, hostId, capacity, capacity]);
  if (!candidates.length) return none;
  let free = capacity - Number(candidates[0].running);
  const seen = new Set<string>();
  const picks: Array<{ id: string; session_id: string }> = [];
  for (const c of candidates) {
    if (free <= 0) break;
    if (seen.has(c.session_id)) continue; // only the oldest waiting message of a session may start
    seen.add(c.session_id);
    picks.push(c);
    free--;
  }
  // One statement: take each picked session's running slot (SKIP LOCKED: a session locked by an abort
  // or a run's end is drained again after that commits), start the tasks whose session was won, and
  // read what run.start needs.
  const out = await rows(em,
    `with x(tid, sid) as (values ${picks.map(() => '(?::text, ?::text)').join(', ')}),
     won as (update sessions s set running_task_id = x.tid from x
        where s.id = x.sid and s.id in (select id from sessions where id in (select sid from x) and running_task_id is null for no key update skip locked)
        returning x.tid, s.engine_session_id),
     t as (update session_tasks set status = 'running', started_at = now() where id in (select tid from won) returning *)
     select ${CLAIM_COLUMNS.replace('s.engine_session_id', 'won.engine_session_id')} from t join won on won.tid = t.id join session_messages m on m.id = t.message_id order by t.n`,
    picks.flatMap((p) => [p.id, p.session_id]));
  return { tasks: out.map(claimed), skipped: out.length < picks.length };
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
