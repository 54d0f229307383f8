// Claiming a host's waiting tasks as one PostgreSQL function: one round trip
// in autocommit, so the host row's lock is held for the function's run only.
// Claimed from the hub as BEGIN, three statements and COMMIT, the lock was
// held across five round trips and the hub's event loop between them; under
// load hub_accept (which locks every host of its batch) queued behind those
// claims and the run ends behind hub_accept: a convoy that held dispatch to
// about 500 messages/s with the hub mostly idle (bench/dispatch.ts).
// The rule is the one claimForHost had (queue.ts), statement for statement;
// each statement takes a fresh snapshot (READ COMMITTED), which the rule needs:
//   1. lock the host row (the lease is read at its latest version); a lease
//      still held starts nothing and says how long it lasts;
//   2. the host's running count, then its oldest waiting tasks of idle
//      sessions whose users have a balance, SKIP LOCKED;
//   3. per session only its oldest waiting task, oldest sessions first, up to
//      the free capacity;
//   4. take each picked session's running slot (SKIP LOCKED: a session locked
//      by an abort or a run's end is drained again after that commits), start
//      the tasks whose session was won, and return what run.start needs.
// The first row is always the summary (o_kind 'meta': lease and how many were
// picked, so the caller knows a session was skipped); then one row per task.
// A change to the rule is a new migration that replaces the function.
export const CLAIM_FUNCTION_SQL = `
create or replace function hub_claim(p_host text, p_cap int)
returns table (o_kind text, o_lease_ms int, o_picked int, id text, session_id text, user_id text, agent_id text, host_id text,
               engine text, work_dir text, mode text, effort text, prompt text, engine_session_id text)
set enable_seqscan = off
language plpgsql as $fn$
declare
  v_lease int;
  v_found boolean;
  v_running int;
  v_tids text[];
  v_sids text[];
begin
  select ceil(extract(epoch from (h.settings_until - now())) * 1000)::int, true into v_lease, v_found
    from hosts h where h.id = p_host for no key update;
  if not coalesce(v_found, false) then
    return query select 'meta'::text, null::int, 0, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text;
    return;
  end if;
  if v_lease is not null and v_lease > 0 then
    return query select 'meta'::text, v_lease, 0, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text;
    return;
  end if;
  select count(*) into v_running from session_tasks t where t.host_id = p_host and t.status = 'running';
  if v_running < p_cap then
    with cand as (
      select t.id, t.session_id, t.n from session_tasks t join sessions s on s.id = t.session_id
       where t.host_id = p_host and t.status = 'queued' and s.running_task_id is null
         and (select u.balance from users u where u.id = t.user_id) > 0
       order by t.n limit least(200, greatest(0, p_cap - v_running) * 20) for no key update of t skip locked),
    firsts as (select distinct on (c.session_id) c.id, c.session_id, c.n from cand c order by c.session_id, c.n),
    picks as (select f.id, f.session_id from firsts f order by f.n limit greatest(0, p_cap - v_running))
    select coalesce(array_agg(p.id), '{}'), coalesce(array_agg(p.session_id), '{}') into v_tids, v_sids from picks p;
  else
    v_tids := '{}';
    v_sids := '{}';
  end if;
  return query select 'meta'::text, null::int, cardinality(v_tids), null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text;
  if cardinality(v_tids) = 0 then
    return;
  end if;
  return query
  with x as (select * from unnest(v_tids, v_sids) as x(tid, sid)),
  won as (update sessions s set running_task_id = x.tid from x
     where s.id = x.sid and s.id in (select s2.id from sessions s2 where s2.id = any(v_sids) and s2.running_task_id is null for no key update skip locked)
     returning x.tid, s.engine_session_id),
  t as (update session_tasks st set status = 'running', started_at = now() where st.id in (select won.tid from won) returning st.*)
  select 'task'::text, null::int, null::int, t.id, t.session_id, t.user_id, t.agent_id, t.host_id, t.engine, t.work_dir, t.mode, t.effort,
         m.content, won.engine_session_id
    from t join won on won.tid = t.id join session_messages m on m.id = t.message_id order by t.n;
end
$fn$`;
