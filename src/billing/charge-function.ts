// Run charges as one PostgreSQL function, so the money rule for runs has one
// home whether it is called inside hub_end_runs (a batch of run ends) or for
// usage reported after an abort's end. Input: [{run, uid, aid, cost, share,
// note?}], one per run to charge, in order. Per run with cost > 0:
//   - the runner (`uid`, the session's owner) pays `cost` in full: a `spend`
//     entry, ref = the run id, even when it takes the balance below zero (the
//     run already happened);
//   - on a `paid` agent run by someone other than its owner, the owner earns
//     floor(covered × share), where `covered` is the part of the cost the
//     runner's balance held before this run (its balance when the call began,
//     less its earlier runs in the call; never below 0): an `earn` entry
//     (ref = the run id) and the agent's `earn` counter, in the same
//     statement, so counters and ledger agree. The cost is the host's word
//     (its owner's), so earning on more than the runner had would let an
//     owner mint tokens by running its own agent from a second account.
// Agents and then users (runners and earning owners) are locked in id order
// before anything is read (the lock order of the message path: sessions →
// tasks → agents → users), so concurrent batches cannot deadlock and the
// balances read are the ones charged; every balance moves only together with
// its ledger entry.
// A change is a new migration that replaces the function.
export const CHARGE_FUNCTION_SQL = `
create or replace function hub_charge_runs(p_runs jsonb)
returns void
set enable_seqscan = off
-- Plans made once per connection, not per call (why: sessions/migration-generic-plans.ts).
set plan_cache_mode = force_generic_plan
language plpgsql as $fn$
declare
  v_uids text[];
  v_moves jsonb;
begin
  if p_runs is null or jsonb_array_length(p_runs) = 0 then
    return;
  end if;
  -- The agents of the runs to charge, locked, then the users whose balances move: runners and the
  -- owners of paid agents among them.
  v_uids := array(
    select r->>'uid' from jsonb_array_elements(p_runs) r where (r->>'cost')::bigint > 0 and r->>'uid' is not null
    union
    select l.owner_id from (
      select a.id, a.owner_id, a.pricing from agents a
       where a.id = any(array(select r->>'aid' from jsonb_array_elements(p_runs) r where (r->>'cost')::bigint > 0 and r->>'uid' is not null))
       order by a.id for no key update) l
     where l.pricing = 'paid');
  if cardinality(v_uids) = 0 then
    return;
  end if;
  perform 1 from (select u.id from users u where u.id = any(v_uids) order by u.id for no key update) locked_users;
  with r as (
    select e.j->>'run' as run, e.j->>'uid' as uid, e.j->>'aid' as aid, (e.j->>'cost')::bigint as cost,
           coalesce((e.j->>'share')::numeric, 0) as share, e.j->>'note' as note, e.o
      from jsonb_array_elements(p_runs) with ordinality as e(j, o)
     where (e.j->>'cost')::bigint > 0 and e.j->>'uid' is not null),
  b as (
    select r.*, least(r.cost, greatest(0, u.balance - coalesce(sum(r.cost) over (partition by r.uid order by r.o
                                                                                  rows between unbounded preceding and 1 preceding), 0))) as covered
      from r join users u on u.id = r.uid)
  select coalesce(jsonb_agg(m order by m.k, m.o), '[]'::jsonb) into v_moves from (
    select b.uid, -b.cost as amount, 'spend' as type, b.run as ref, b.note, null::text as aid, 0 as k, b.o from b
    union all
    select a.owner_id, floor(b.covered * b.share)::bigint, 'earn', b.run,
           case when b.covered < b.cost then concat_ws('; ', b.note, format('share of the %s of %s tokens the runner''s balance covered', b.covered, b.cost))
                else b.note end,
           a.id, 1, b.o
      from b join agents a on a.id = b.aid
     where a.pricing = 'paid' and a.owner_id <> b.uid and floor(b.covered * b.share) > 0
  ) m;
  update agents a set earn = a.earn + x.amount
    from (select m->>'aid' as aid, sum((m->>'amount')::bigint) as amount from jsonb_array_elements(v_moves) m
           where m->>'aid' is not null group by m->>'aid') x
   where a.id = x.aid;
  with mv as (
    select m->>'uid' as uid, (m->>'amount')::bigint as amount, m->>'type' as type, m->>'ref' as ref, m->>'note' as note, o as ord
      from jsonb_array_elements(v_moves) with ordinality as e(m, o)),
  tot as (select mv.uid, sum(mv.amount) as total from mv group by mv.uid),
  u as (
    update users us set balance = us.balance + tot.total, updated_at = now()
      from tot where us.id = tot.uid and us.id = any(v_uids)
    returning us.id, us.balance - tot.total as before)
  insert into ledger_entries (id, user_id, amount, type, ref, note, balance_after)
  -- Time first (11 hex digits of milliseconds), as ids.ts timeOrderedId: the primary key grows at its right edge.
  select 'led_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 11, '0')
           || substr(md5(random()::text || clock_timestamp()::text || mv.ord::text), 1, 12), mv.uid, mv.amount, mv.type, mv.ref, mv.note,
         u.before + sum(mv.amount) over (partition by mv.uid order by mv.ord)
    from mv join u on u.id = mv.uid;
end
$fn$`;
