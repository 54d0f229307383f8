// The agents' run counters as one PostgreSQL function, so the rule has one
// home whether a run's end is written by the hub (recordRuns) or inside the
// sessions' hub_end_runs. Input: [{aid, cost, uid, model}], one per finished
// run. Per agent: runs + n, cost + costs, lastUsedAt = now, modelName = the
// model the runs reported. (The owners' earnings, and the agents' `earn`, are
// the charging rule's: billing/charge-function.ts.) Agents are locked in id order first,
// so concurrent batches cannot deadlock on them.
// A change is a new migration that replaces the function.
export const RECORD_RUNS_FUNCTION_SQL = `
create or replace function hub_record_runs(p_runs jsonb)
returns void
-- Every table access here is a lookup by key: while a table is small or its statistics are
-- stale, a cached plan would otherwise scan it whole on every call.
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  v_aids text[];
begin
  if p_runs is null or jsonb_array_length(p_runs) = 0 then
    return;
  end if;
  -- Ids as an array: "= any(array)" keeps the lookups on the primary key (see hub_accept).
  v_aids := array(select distinct e->>'aid' from jsonb_array_elements(p_runs) e);
  perform 1 from (select a.id from agents a where a.id = any(v_aids) order by a.id for no key update) locked_agents;
  with v as (
    select e->>'aid' as aid, greatest(0, (e->>'cost')::bigint) as cost, e->>'uid' as uid, e->>'model' as model
      from jsonb_array_elements(p_runs) e),
  agg as (
    select v.aid, count(*) as n, sum(v.cost) as cost, (array_agg(v.model) filter (where v.model is not null))[1] as model
      from v group by v.aid)
  update agents a set runs = a.runs + agg.n, cost = a.cost + agg.cost, last_used_at = now(),
         model_name = coalesce(left(agg.model, 200), a.model_name)
    from agg where a.id = agg.aid and a.id = any(v_aids);
end
$fn$`;
