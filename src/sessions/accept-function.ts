// The queue rule as one PostgreSQL function: accepting a batch of user
// messages (one per session) is one round trip whose statements keep their
// plans cached per connection, instead of BEGIN, three statements and COMMIT
// from the hub. The function body runs its statements in order, each with a
// fresh snapshot (READ COMMITTED), which the rule needs:
//   1. lock the sessions, in id order, skipping one another transaction
//      holds (a run's end, another node's accept): its message is answered
//      'retry' with nothing written, and the caller sends it again in its next
//      batch with `wait: true` (then this call waits for that lock, at most
//      p_wait_ms when given: a lock still held then answers 'retry' again and
//      the caller sends the message alone, waiting as long as it takes), so a
//      batch never waits for the locks of a few of its sessions more than
//      p_wait_ms, and the hub's own locks, held briefly, are waited for in the
//      batch;
//   2. lock their hosts, in id order (sessions → hosts: the lock order of
//      every transaction on this path; the claim side never waits for a
//      session, see queue.ts);
//   3. one statement, whose snapshot starts after both locks are held:
//      count each session's waiting messages and each host's running runs,
//      decide every message (run now, wait with its reason, or refuse), bump
//      the sessions, insert the messages and their tasks. A host whose
//      settings lease is held (hosts/settings-lease.ts: its settings are being
//      written) starts nothing: the message waits as host_capacity, and the
//      lease's end drains the host.
// Outcomes: running | session_busy | host_capacity (wait) | not_found |
// no_balance (the sender's token balance is ≤ 0) | guest_floor (on another account's agent: the balance
// is below gmin for this message and each of its such messages running or waiting) | session_full (the
// session would store more than its smax bytes: sessions.stored_bytes) | no_host | queue_full
// (refused: nothing written for that message) | retry (its session was
// locked: nothing written, send it again).
// A change to the rule is a new migration that replaces the function.
export const ACCEPT_FUNCTION_SQL = `
create or replace function hub_accept(p_batch jsonb, p_max_waiting int, p_wait_ms int)
returns table (o_ord int, o_outcome text, o_engine_session_id text, o_mode text, o_effort text)
-- Every table access here is a lookup by key: while a table is small or its statistics are
-- stale, a cached plan would otherwise scan it whole on every call.
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  -- Ids as arrays: "= any(array)" keeps every lookup on an index whatever the batch size (a join
  -- to the batch's rows gets a generic plan that may scan whole tables).
  v_sids text[] := array(select e->>'sid' from jsonb_array_elements(p_batch) e);
  v_wait text[] := array(select e->>'sid' from jsonb_array_elements(p_batch) e where coalesce((e->>'wait')::boolean, false));
  -- Senders of messages on other accounts' agents (gmin > 0: the tokens that must back each such run).
  v_guests text[] := array(select distinct e->>'uid' from jsonb_array_elements(p_batch) e where coalesce((e->>'gmin')::bigint, 0) > 0);
  v_hids text[];
  v_got text[] := '{}';
  v_skip text[];
  v_lock_timeout text;
begin
  -- The sessions to wait for first, in id order, then the others without waiting: this call waits
  -- only while it holds sessions below the one it waits for (the order of every lock taker), so
  -- no deadlock.
  if cardinality(v_wait) > 0 and p_wait_ms is null then
    v_got := array(select l.id from (select s.id from sessions s where s.id = any(v_wait) order by s.id for no key update) l);
  elsif cardinality(v_wait) > 0 then
    v_lock_timeout := current_setting('lock_timeout');
    begin
      perform set_config('lock_timeout', p_wait_ms || 'ms', true);
      v_got := array(select l.id from (select s.id from sessions s where s.id = any(v_wait) order by s.id for no key update) l);
      perform set_config('lock_timeout', v_lock_timeout, true);
    exception when lock_not_available then
      -- Still held after p_wait_ms: take the free ones; the others are answered 'retry' below.
      perform set_config('lock_timeout', v_lock_timeout, true);
      v_got := array(select l.id from (select s.id from sessions s where s.id = any(v_wait) order by s.id for no key update skip locked) l);
    end;
  end if;
  v_got := v_got || array(select l.id from (select s.id from sessions s where s.id = any(v_sids) and not (s.id = any(v_wait))
                                              order by s.id for no key update skip locked) l);
  -- Skipped: sessions that exist but were locked (a session not found is answered not_found below).
  v_skip := array(select s.id from sessions s where s.id = any(v_sids) and not (s.id = any(v_got)));
  v_hids := array(select distinct e->>'hid' from jsonb_array_elements(p_batch) e where not (e->>'sid' = any(v_skip)));
  perform 1 from (select h.id from hosts h where h.id = any(v_hids) order by h.id for no key update) locked_hosts;
  return query
  select (e->>'ord')::int, 'retry'::text, null::text, null::text, null::text
    from jsonb_array_elements(p_batch) e where e->>'sid' = any(v_skip);
  if cardinality(v_skip) > 0 then
    v_sids := v_got;
  end if;
  return query
  with v as (
    select (e->>'ord')::int as ord, e->>'sid' as sid, e->>'uid' as uid, e->>'tid' as tid, e->>'mid' as mid,
           e->>'content' as content, e->>'hid' as hid, (e->>'cap')::int as cap, e->>'aid' as aid,
           e->>'engine' as engine, e->>'wd' as wd, e->>'mode' as mode, e->>'effort' as effort,
           coalesce((e->>'gmin')::bigint, 0) as gmin, coalesce((e->>'smax')::bigint, 0) as smax,
           -- This message's place among its sender's guest messages in the batch (each backed on top of those before).
           row_number() over (partition by e->>'uid', coalesce((e->>'gmin')::bigint, 0) > 0 order by (e->>'ord')::int) as gk
      from jsonb_array_elements(p_batch) e where not (e->>'sid' = any(v_skip))),
  sx as (select s.id, s.user_id, s.running_task_id, s.engine_session_id, s.mode, s.effort, s.stored_bytes from sessions s where s.id = any(v_sids)),
  hx as (select h.id, coalesce(h.settings_until > now(), false) as leased from hosts h where h.id = any(v_hids)),
  ux as (select u.id, u.balance from users u where u.id = any(array(select distinct v.uid from v))),
  -- Each guest message running or waiting is backed by its gmin: the sender's such messages held now.
  g as (select t.user_id, count(*) as n from session_tasks t
         where t.user_id = any(v_guests) and t.gmin > 0 and t.status in ('running', 'queued') group by t.user_id),
  w as (select t.session_id, count(*) as n from session_tasks t
         where t.status = 'queued' and t.session_id = any(v_sids) group by t.session_id),
  -- A run aborted here still holds its slot while its engine may be stopping on the host (engine_until): counted
  -- apart, on its own small partial index (an OR of the two made one bitmap scan of both, 15 % more CPU a message).
  r as (select x.host_id, sum(x.n) as n from (
          select t.host_id, count(*) as n from session_tasks t where t.status = 'running' and t.host_id = any(v_hids) group by t.host_id
          union all
          select t.host_id, count(*) from session_tasks t where t.engine_until > now() and t.host_id = any(v_hids) group by t.host_id) x
         group by x.host_id),
  c as (
    select v.*, s.engine_session_id, coalesce(h.leased, false) as leased, coalesce(v.mode, s.mode) as run_mode, coalesce(v.effort, s.effort) as run_effort,
           case when s.id is null or s.user_id <> v.uid then 'not_found'
                when v.smax > 0 and s.stored_bytes + octet_length(v.content) > v.smax then 'session_full'
                when coalesce(u.balance, 0) <= 0 then 'no_balance'
                when v.gmin > 0 and coalesce(u.balance, 0) < v.gmin * (coalesce(g.n, 0) + v.gk) then 'guest_floor'
                when s.running_task_id is not null or coalesce(w.n, 0) > 0 then
                  case when coalesce(w.n, 0) >= p_max_waiting then 'queue_full'
                       when s.running_task_id is not null then 'session_busy'
                       else 'host_capacity' end
                when h.id is null then 'no_host'
                else 'candidate' end as kind
      from v left join sx s on s.id = v.sid left join w on w.session_id = v.sid left join hx h on h.id = v.hid
             left join ux u on u.id = v.uid left join g on g.user_id = v.uid),
  d as (
    select c.*, c.kind = 'candidate' and not c.leased
             and coalesce(r.n, 0) + row_number() over (partition by c.hid, c.kind = 'candidate' order by c.ord) <= c.cap as go
      from c left join r on r.host_id = c.hid
     where c.kind in ('candidate', 'session_busy', 'host_capacity')),
  upd as (
    update sessions s set next_seq = s.next_seq + 1, message_count = s.message_count + 1, stored_bytes = s.stored_bytes + octet_length(d.content),
           last_message = left(d.content, 500),
           last_msg_at = now(), last_active_at = now(), updated_at = now(),
           running_task_id = case when d.go then d.tid else s.running_task_id end
      from d where s.id = d.sid and s.id = any(v_sids)
    returning s.id, s.next_seq - 1 as seq),
  m as (
    insert into session_messages (id, session_id, task_id, role, kind, content, seq, provider)
    select d.mid, d.sid, d.tid, 'user', 'text', d.content, upd.seq, d.engine from d join upd on upd.id = d.sid order by d.ord
    returning id),
  t as (
    insert into session_tasks (id, session_id, user_id, agent_id, host_id, engine, work_dir, message_id, status, queue_reason, mode, effort, started_at, gmin)
    select d.tid, d.sid, d.uid, d.aid, d.hid, d.engine, d.wd, d.mid, case when d.go then 'running' else 'queued' end,
           case when d.go then null when d.kind = 'session_busy' then 'session_busy' else 'host_capacity' end,
           d.run_mode, d.run_effort, case when d.go then now() else null end, d.gmin
      from d join m on m.id = d.mid order by d.ord
    returning id)
  select c.ord,
         case when c.kind in ('not_found', 'session_full', 'no_balance', 'guest_floor', 'no_host', 'queue_full', 'session_busy') then c.kind
              when d.go then 'running' else 'host_capacity' end,
         c.engine_session_id, c.run_mode, c.run_effort
    from c left join d on d.ord = c.ord
   order by c.ord;
end
$fn$`;
