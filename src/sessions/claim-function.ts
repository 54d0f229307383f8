// Claiming hosts' waiting tasks as one PostgreSQL function: one round trip
// in autocommit, so the host rows' locks are held for the function's run only.
// Claimed from the hub as BEGIN, three statements and COMMIT, the lock was
// held across five round trips and the hub's event loop between them; under
// load hub_accept (which locks every host of its batch) queued behind those
// claims and the run ends behind hub_accept: a convoy that held dispatch to
// about 500 messages/s with the hub mostly idle (bench/dispatch.ts).
//
// hub_claim_many(p_caps: {host id: capacity}) claims for every host given, set
// based: a fixed number of statements whatever the number of hosts (a run-end
// batch claims for all its hosts in one call; one hub_claim per host cost
// ~3 ms each there). The rule is the one claimForHost had (queue.ts),
// statement for statement; each statement takes a fresh snapshot (READ
// COMMITTED), which the rule needs:
//   1. lock the host rows, in host id order (after any session locks the
//      caller holds: sessions → hosts); their leases are read at their latest
//      version; a host whose lease is still held starts nothing and says how
//      long it lasts;
//   2. each other host's running count (one grouped query) and its free
//      capacity; for each host with room, its oldest waiting tasks of idle
//      sessions whose users have a balance (one backing each guest run: gmin), SKIP LOCKED (at most 20 per free
//      slot, 200 in all, as before);
//   3. per session only its oldest waiting task, then per host the oldest
//      sessions first, up to its free capacity (window functions);
//   4. take each picked session's running slot (SKIP LOCKED: a session locked
//      by an abort or a run's end is drained again after that commits), start
//      the tasks whose session was won, and return what run.start needs.
// Rows: first one summary per host asked for (o_kind 'meta': the lease and how
// many were picked, so the caller knows a session was skipped; an unknown host
// has neither), in host id order; then one row per task started, by host and
// age. hub_claim(host, cap) is the same claim for one host (its callers read
// hub_claim's rows: no o_host). A change to the rule is a new migration that
// replaces the functions.
export const CLAIM_MANY_FUNCTION_SQL = `
create or replace function hub_claim_many(p_caps jsonb)
returns table (o_host text, o_kind text, o_lease_ms int, o_picked int, id text, session_id text, user_id text, agent_id text, host_id text,
               engine text, work_dir text, mode text, effort text, prompt text, engine_session_id text)
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  -- Ids as arrays: "= any(array)" keeps every lookup on an index (see hub_accept).
  v_req text[] := array(select k from jsonb_object_keys(coalesce(p_caps, '{}'::jsonb)) k order by k);
  v_hosts text[];
  v_leases int[];
  v_open text[];
  v_free int[];
  v_tids text[];
  v_sids text[];
  v_hids text[];
begin
  if cardinality(v_req) = 0 then
    return;
  end if;
  select coalesce(array_agg(l.id order by l.id), '{}'), coalesce(array_agg(l.lease order by l.id), '{}') into v_hosts, v_leases
    from (select h.id, ceil(extract(epoch from (h.settings_until - now())) * 1000)::int as lease
            from hosts h where h.id = any(v_req) order by h.id for no key update) l;
  v_open := array(select x.hid from unnest(v_hosts, v_leases) as x(hid, lease) where x.lease is null or x.lease <= 0);
  -- A run aborted here still holds its slot while its engine may be stopping on the host (engine_until): counted
  -- apart, on its own small partial index (accept-function.ts says why).
  with r as (select x.host_id, sum(x.n)::int as running from (
               select t.host_id, count(*) as n from session_tasks t where t.host_id = any(v_open) and t.status = 'running' group by t.host_id
               union all
               select t.host_id, count(*) from session_tasks t where t.host_id = any(v_open) and t.engine_until > now() group by t.host_id) x
              group by x.host_id),
  f as (select o.hid, greatest(0, coalesce((p_caps->>o.hid)::int, 0) - coalesce(r.running, 0)) as free
          from unnest(v_open) as o(hid) left join r on r.host_id = o.hid)
  select coalesce(array_agg(f.hid order by f.hid), '{}'), coalesce(array_agg(f.free order by f.hid), '{}') into v_open, v_free
    from f where f.free > 0;
  if cardinality(v_open) > 0 then
    with cand as (
      select x.hid, x.free, c.id, c.session_id, c.n, c.user_id, c.gmin, c.bal, c.grun from unnest(v_open, v_free) as x(hid, free)
      cross join lateral (
        select t.id, t.session_id, t.n, t.user_id, t.gmin, b.bal, g.grun
          from session_tasks t join sessions s on s.id = t.session_id
          cross join lateral (select u.balance as bal from users u where u.id = t.user_id) b
          cross join lateral (select case when t.gmin > 0 then (select count(*) from session_tasks r
                                where r.user_id = t.user_id and r.gmin > 0 and r.status = 'running') else 0 end as grun) g
         where t.host_id = x.hid and t.status = 'queued' and s.running_task_id is null
           -- A guest's run (gmin > 0) starts only while the balance backs it and the guest runs already running.
           and b.bal >= case when t.gmin = 0 then 1 else t.gmin * (1 + g.grun) end
         order by t.n limit least(200, x.free::bigint * 20) for no key update of t skip locked) c),
    firsts as (select cand.*, row_number() over (partition by cand.session_id order by cand.n) as k from cand),
    picks as (select fs.*, row_number() over (partition by fs.hid order by fs.n) as r from firsts fs where fs.k = 1),
    -- A guest's picks in this call count against its balance with its runs running (as hub_accept's gk):
    -- checked one by one above, every waiting guest message passed at once on one floor.
    chosen as (select p.*, row_number() over (partition by p.user_id, p.gmin > 0 order by p.hid, p.n) as gr from picks p where p.r <= p.free)
    select coalesce(array_agg(p.id order by p.hid, p.n), '{}'), coalesce(array_agg(p.session_id order by p.hid, p.n), '{}'),
           coalesce(array_agg(p.hid order by p.hid, p.n), '{}')
      into v_tids, v_sids, v_hids
      from chosen p where p.gmin = 0 or p.bal >= p.gmin * (p.grun + p.gr);
  else
    v_tids := '{}';
    v_sids := '{}';
    v_hids := '{}';
  end if;
  return query
  select q.hid, 'meta'::text, case when l.lease > 0 then l.lease end,
         case when l.hid is null or l.lease > 0 then 0 else (select count(*)::int from unnest(v_hids) p(hid) where p.hid = q.hid) end,
         null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text
    from unnest(v_req) as q(hid) left join unnest(v_hosts, v_leases) as l(hid, lease) on l.hid = q.hid
   order by q.hid;
  if cardinality(v_tids) = 0 then
    return;
  end if;
  return query
  with x as (select * from unnest(v_tids, v_sids) as x(tid, sid)),
  won as (update sessions s set running_task_id = x.tid from x
     where s.id = x.sid and s.id in (select s2.id from sessions s2 where s2.id = any(v_sids) and s2.running_task_id is null for no key update skip locked)
     returning x.tid, s.engine_session_id),
  t as (update session_tasks st set status = 'running', started_at = now() where st.id in (select won.tid from won) returning st.*)
  select t.host_id, 'task'::text, null::int, null::int, t.id, t.session_id, t.user_id, t.agent_id, t.host_id, t.engine, t.work_dir, t.mode, t.effort,
         m.content, won.engine_session_id
    from t join won on won.tid = t.id join session_messages m on m.id = t.message_id order by t.host_id, t.n;
end
$fn$`;

// The claim of one host: hub_claim_many's rows for it, without o_host (queue.ts reads them).
export const CLAIM_FUNCTION_SQL = `
create or replace function hub_claim(p_host text, p_cap int)
returns table (o_kind text, o_lease_ms int, o_picked int, id text, session_id text, user_id text, agent_id text, host_id text,
               engine text, work_dir text, mode text, effort text, prompt text, engine_session_id text)
language plpgsql as $fn$
begin
  return query
  select c.o_kind, c.o_lease_ms, c.o_picked, c.id, c.session_id, c.user_id, c.agent_id, c.host_id, c.engine, c.work_dir, c.mode, c.effort,
         c.prompt, c.engine_session_id
    from hub_claim_many(jsonb_build_object(coalesce(p_host, ''), p_cap)) with ordinality as c
   order by c.ordinality;
end
$fn$`;
