// The end of runs as one PostgreSQL function: a batch of run ends is one
// round trip (instead of BEGIN, a lock, a statement per run, the agents'
// counters, COMMIT and a look for waiting work), with plans cached per
// connection. Its statements run in order, each with a fresh snapshot:
//   1. lock each run's session and then its task, in session id order;
//   2. one statement: skip runs already ended (or whose session is gone),
//      decide each run's final status from the status it had (an aborted run
//      stays aborted and its assistant text is marked interrupted), write the
//      run's last rows (numbered from the session's seq counter, which the
//      same statement bumps), end the task, free the session's running slot,
//      add to the agents' counters, and report the batch's hosts that have
//      waiting work (this snapshot sees every message queued before the
//      session locks were taken; one queued later drains its host itself).
//   3. the agents' counters (hub_record_runs), then the runs' charges and the
//      owners' earnings (hub_charge_runs, billing/charge-function.ts);
//   4. the batch's hosts with waiting work whose capacity the caller knows
//      (p_caps: {host id: capacity}, the channels it holds) are claimed for
//      here, all in one call of hub_claim_many (claim-function.ts: the one
//      place of the rule — host locks in host id order after the session
//      locks (the lock order of hub_accept), settings lease, capacity,
//      balance, oldest first, one run per session). A session whose run just
//      ended starts its next message in the same call, so a backlog costs no
//      claim per message. A host with waiting work and no known capacity is
//      only reported: the caller drains it.
// Batch element: {run, sid, hid, aid, engine, ok, aborted, tin, tout, cost,
// share, model, esid, ecode, emsg, amodel, n, texts, fresh, last, partial, rows, b}; `b` the bytes of
// its rows and streamed text (added to sessions.stored_bytes); `rows`
// as writeRunBatch numbers them (seq known, or off from the base), a row with
// `partial: true` (the streamed text of the turn) only when interrupted; its
// content is the element's `partial` (sent once: it may be megabytes).
// Rows: one per run ended (o_run …), then one per host with waiting work
// (o_waiting_host; o_claim: its claim's rows as hub_claim gives them, as a JSON
// array, null when not claimed here). A change is a new migration that replaces the function.
export const END_FUNCTION_SQL = `
create or replace function hub_end_runs(p_batch jsonb, p_caps jsonb)
returns table (o_run text, o_status text, o_prev text, o_base bigint, o_waiting_host text, o_claim jsonb)
-- Every table access here is a lookup by key: while a table is small or its statistics are
-- stale, a cached plan would otherwise scan it whole on every call.
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  -- Ids as arrays: "= any(array)" keeps every lookup on an index (see hub_accept).
  v_runs text[] := array(select e->>'run' from jsonb_array_elements(p_batch) e);
  v_sids text[] := array(select e->>'sid' from jsonb_array_elements(p_batch) e);
  v_hids text[] := array(select distinct e->>'hid' from jsonb_array_elements(p_batch) e);
  v_rows jsonb;
  v_intr text[];
  v_ended text[];
  v_waiting text[];
  v_caps jsonb;
begin
  perform 1 from (
    select s.id from sessions s join session_tasks t on t.session_id = s.id
     where s.id = any(v_sids) and t.id = any(v_runs) order by s.id, t.id for no key update of s, t
  ) locked_runs;
  with v as (
    select e->>'run' as run, e->>'sid' as sid, e->>'aid' as aid, e->>'engine' as engine,
           (e->>'ok')::boolean as ok, coalesce((e->>'aborted')::boolean, false) as aborted,
           (e->>'tin')::bigint as tin, (e->>'tout')::bigint as tout, (e->>'cost')::bigint as cost,
           coalesce((e->>'share')::numeric, 0) as share, e->>'model' as model, e->>'esid' as esid,
           e->>'ecode' as ecode, e->>'emsg' as emsg, e->>'amodel' as amodel,
           (e->>'n')::int as n, (e->>'texts')::int as texts, (e->>'fresh')::int as fresh, e->>'last' as last_text,
           e->>'partial' as partial, e->'rows' as rows, coalesce((e->>'b')::bigint, 0) as b
      from jsonb_array_elements(p_batch) e),
  q as (
    select v.*, t.status as prev, t.user_id, (v.aborted or t.status = 'aborted') as intr,
           case when t.status <> 'running' then t.status when v.ok then 'completed'
                when v.aborted or t.status = 'aborted' then 'aborted' else 'failed' end as final,
           case when (v.aborted or t.status = 'aborted') and v.partial is not null then 1 else 0 end as extra
      from v join session_tasks t on t.id = v.run
     where t.id = any(v_runs) and t.ended_at is null),
  rr as (
    select q.run, q.sid, q.engine, q.intr, q.partial as streamed, x.*
      from q, jsonb_to_recordset(q.rows) as x(id text, role text, kind text, content text, seq int, off int, tool_name text,
                                                tool_id text, tool_input jsonb, tool_result jsonb, interrupted boolean, partial boolean)
     where not coalesce(x.partial, false) or q.intr),
  s as (
    update sessions s set next_seq = s.next_seq + q.fresh + q.extra, message_count = s.message_count + q.n + q.extra,
           stored_bytes = s.stored_bytes + q.b, unread = s.unread + q.texts + q.extra,
           last_message = coalesce(left(case when q.extra = 1 then q.partial else q.last_text end, 500), s.last_message),
           last_msg_at = case when q.n + q.extra > 0 then now() else s.last_msg_at end,
           last_active_at = now(), updated_at = now(), model = coalesce(q.model, s.model),
           engine_session_id = coalesce(q.esid, s.engine_session_id),
           running_task_id = case when s.running_task_id = q.run then null else s.running_task_id end
      from q where s.id = q.sid and s.id = any(v_sids)
    returning s.id, s.next_seq - q.fresh - q.extra as base),
  m as (
    insert into session_messages (id, session_id, task_id, role, kind, content, seq, tool_name, tool_id, tool_input, tool_result, provider, interrupted)
    select rr.id, rr.sid, rr.run, rr.role, rr.kind, case when coalesce(rr.partial, false) then rr.streamed else rr.content end,
           coalesce(rr.seq, s.base + rr.off), rr.tool_name, rr.tool_id,
           rr.tool_input, rr.tool_result, rr.engine, coalesce(rr.interrupted, false) or (rr.intr and rr.role = 'assistant')
      from rr join s on s.id = rr.sid
    returning 1),
  t as (
    update session_tasks st set status = q.final, input_tokens = q.tin, output_tokens = q.tout, model = coalesce(q.model, st.model),
           error_code = q.ecode, error_message = q.emsg, ended_at = now()
      from q where st.id = q.run and st.id = any(v_runs)
    returning 1)
  select coalesce(jsonb_agg(jsonb_build_object('run', q.run, 'final', q.final, 'prev', q.prev, 'base', s.base, 'intr', q.intr,
                                               'aid', q.aid, 'cost', q.cost, 'share', q.share, 'uid', q.user_id, 'model', q.amodel)), '[]'::jsonb)
    into v_rows
    from q join s on s.id = q.sid;
  -- Interrupted runs: their earlier assistant rows too (this statement sees the rows just written).
  -- A run's rows follow its user message in its session (one run per session at a time), so they are
  -- found through session_messages_session from that message on: no index on task_id, which every
  -- row written would pay for, serves this rare update.
  v_intr := array(select r->>'run' from jsonb_array_elements(v_rows) r where (r->>'intr')::boolean);
  if cardinality(v_intr) > 0 then
    update session_messages sm set interrupted = true
      from session_tasks it join session_messages um on um.id = it.message_id
     where it.id = any(v_intr) and sm.session_id = it.session_id and sm.n > um.n
       and sm.task_id = it.id and sm.role = 'assistant' and not sm.interrupted;
  end if;
  perform hub_record_runs((select jsonb_agg(r) from jsonb_array_elements(v_rows) r where r->>'aid' is not null));
  perform hub_charge_runs(v_rows);
  return query
  select r->>'run', r->>'final', r->>'prev', (r->>'base')::bigint, null::text, null::jsonb from jsonb_array_elements(v_rows) r;
  -- Claimed for only where a run ended in this call (its caller dispatches what starts), all in one call.
  v_ended := array(select distinct e->>'hid' from jsonb_array_elements(p_batch) e
                    where e->>'run' in (select r->>'run' from jsonb_array_elements(v_rows) r));
  -- One index probe per host (not every waiting task of the batch's hosts).
  v_waiting := array(select h.hid from unnest(v_hids) as h(hid)
                      where exists (select 1 from session_tasks tk where tk.host_id = h.hid and tk.status = 'queued') order by h.hid);
  if cardinality(v_waiting) = 0 then
    return;
  end if;
  v_caps := coalesce((select jsonb_object_agg(w.hid, (p_caps->>w.hid)::int) from unnest(v_waiting) as w(hid)
                       where w.hid = any(v_ended) and p_caps->>w.hid is not null), '{}'::jsonb);
  return query
  with c as (select * from hub_claim_many(v_caps) with ordinality as c),
  g as (select c.o_host, jsonb_agg(to_jsonb(c) - 'o_host' - 'ordinality' order by c.ordinality) as claim from c group by c.o_host)
  select null::text, null::text, null::text, null::bigint, w.hid,
         case when v_caps ? w.hid then coalesce(g.claim, '[]'::jsonb) end
    from unnest(v_waiting) as w(hid) left join g on g.o_host = w.hid
   order by w.hid;
end
$fn$`;
