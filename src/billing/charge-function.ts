// Run charges as one PostgreSQL function, so the money rule for runs has one
// home whether it is called inside hub_end_runs (a batch of run ends) or for
// usage reported after an abort's end. Input: [{run, uid, aid, cost, share,
// note?}], one per run to charge. Per run with cost > 0:
//   - the runner (`uid`, the session's owner) pays `cost` in full: a `spend`
//     entry, ref = the run id, even when it takes the balance below zero (the
//     run already happened);
//   - on a `paid` agent run by someone other than its owner, the owner earns
//     floor(cost × share): an `earn` entry (ref = the run id) and the agent's
//     `earn` counter, in the same statement, so counters and ledger agree.
// Users are locked in id order after the agents (the lock order of the
// message path: sessions → tasks → agents → users), so concurrent batches
// cannot deadlock; every balance moves only together with its ledger entry.
// A change is a new migration that replaces the function.
export const CHARGE_FUNCTION_SQL = `
create or replace function hub_charge_runs(p_runs jsonb)
returns void
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  v_moves jsonb;
  v_uids text[];
begin
  if p_runs is null or jsonb_array_length(p_runs) = 0 then
    return;
  end if;
  select coalesce(jsonb_agg(m), '[]'::jsonb) into v_moves from (
    select r.uid, -r.cost as amount, 'spend' as type, r.run as ref, r.note, null::text as aid
      from jsonb_to_recordset(p_runs) as r(run text, uid text, aid text, cost bigint, share numeric, note text)
     where r.cost > 0 and r.uid is not null
    union all
    select a.owner_id, floor(r.cost * r.share)::bigint, 'earn', r.run, r.note, a.id
      from jsonb_to_recordset(p_runs) as r(run text, uid text, aid text, cost bigint, share numeric, note text)
      join agents a on a.id = r.aid
     where r.cost > 0 and r.uid is not null and a.pricing = 'paid' and a.owner_id <> r.uid and floor(r.cost * r.share) > 0
  ) m;
  if jsonb_array_length(v_moves) = 0 then
    return;
  end if;
  update agents a set earn = a.earn + x.amount
    from (select m->>'aid' as aid, sum((m->>'amount')::bigint) as amount from jsonb_array_elements(v_moves) m
           where m->>'aid' is not null group by m->>'aid') x
   where a.id = x.aid;
  v_uids := array(select distinct m->>'uid' from jsonb_array_elements(v_moves) m);
  perform 1 from (select u.id from users u where u.id = any(v_uids) order by u.id for no key update) locked_users;
  with mv as (
    select m->>'uid' as uid, (m->>'amount')::bigint as amount, m->>'type' as type, m->>'ref' as ref, m->>'note' as note, o as ord
      from jsonb_array_elements(v_moves) with ordinality as e(m, o)),
  tot as (select mv.uid, sum(mv.amount) as total from mv group by mv.uid),
  u as (
    update users us set balance = us.balance + tot.total, updated_at = now()
      from tot where us.id = tot.uid and us.id = any(v_uids)
    returning us.id, us.balance - tot.total as before)
  insert into ledger_entries (id, user_id, amount, type, ref, note, balance_after)
  select 'led_' || substr(md5(random()::text || clock_timestamp()::text || mv.ord::text), 1, 16), mv.uid, mv.amount, mv.type, mv.ref, mv.note,
         u.before + sum(mv.amount) over (partition by mv.uid order by mv.ord)
    from mv join u on u.id = mv.uid;
end
$fn$`;
