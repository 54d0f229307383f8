// Run charges as one PostgreSQL function, so the money rule for runs has one
// home whether it is called inside hub_end_runs (a batch of run ends) or for
// usage reported after an abort's end. Input: [{run, uid, aid, cost, share,
// note?}], one per run to charge, in order. Per run with cost > 0, `covered`
// is the part of the cost the runner's balance held before this run (its
// balance when the call began, less its earlier runs in the call; never below 0):
//   - the runner (`uid`, the session's owner) pays: a `spend` entry, ref = the
//     run id; `cost` in full on its own agent, even below zero (its own host's
//     word), and `covered` on another account's agent (that owner's host's
//     word: any usage it reported took a guest far below zero, the account
//     unusable until paid back). Nothing covered, no entry;
//   - on a `paid` agent run by someone other than its owner, the owner earns
//     floor(covered × share): an `earn` entry
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
  v_run text[]; v_uid text[]; v_aid text[]; v_cost bigint[]; v_share numeric[]; v_note text[];
  v_uids text[];
begin
  if p_runs is null or jsonb_array_length(p_runs) = 0 then
    return;
  end if;
  -- The runs to charge, read out of the JSON once, in order (every later statement reads these arrays).
  select coalesce(array_agg(e->>'run' order by o), '{}'), coalesce(array_agg(e->>'uid' order by o), '{}'),
         coalesce(array_agg(e->>'aid' order by o), '{}'), coalesce(array_agg((e->>'cost')::bigint order by o), '{}'),
         coalesce(array_agg(coalesce((e->>'share')::numeric, 0) order by o), '{}'), coalesce(array_agg(e->>'note' order by o), '{}')
    into v_run, v_uid, v_aid, v_cost, v_share, v_note
    from jsonb_array_elements(p_runs) with ordinality as x(e, o)
   where (e->>'cost')::bigint > 0 and e->>'uid' is not null;
  if cardinality(v_run) = 0 then
    return;
  end if;
  v_uids := array(
    select u from unnest(v_uid) u
    union
    select l.owner_id from (
      select a.id, a.owner_id, a.pricing from agents a where a.id = any(v_aid) order by a.id for no key update) l
     where l.pricing = 'paid');
  perform 1 from (select u.id from users u where u.id = any(v_uids) order by u.id for no key update) locked_users;
  -- One statement moves the money: it reads the balances as they were when the locks were taken
  -- (one snapshot), so covered is each runner's balance before this call less its earlier runs here.
  with r as (
    select * from unnest(v_run, v_uid, v_aid, v_cost, v_share, v_note) with ordinality as r(run, uid, aid, cost, share, note, o)),
  b as (
    select c.*, case when c.own then c.cost else c.covered end as charged
      from (select r.*, coalesce(ag.owner_id = r.uid, false) as own,
                   least(r.cost, greatest(0, u.balance - coalesce(sum(r.cost) over (partition by r.uid order by r.o
                                                                                   rows between unbounded preceding and 1 preceding), 0))) as covered
              from r join users u on u.id = r.uid left join agents ag on ag.id = r.aid) c),
  m as (
    select b.uid, -b.charged as amount, 'spend' as type, b.run as ref,
           case when b.charged < b.cost then concat_ws('; ', b.note, format('charged %s of its %s tokens: a run on another account''s agent costs at most the balance it found', b.charged, b.cost))
                else b.note end,
           null::text as aid, 0 as k, b.o
      from b where b.charged > 0
    union all
    select a.owner_id, floor(b.covered * b.share)::bigint, 'earn', b.run,
           case when b.covered < b.cost then concat_ws('; ', b.note, format('share of the %s of %s tokens the runner''s balance covered', b.covered, b.cost))
                else b.note end,
           a.id, 1, b.o
      from b join agents a on a.id = b.aid
     where a.pricing = 'paid' and a.owner_id <> b.uid and floor(b.covered * b.share) > 0),
  ag as (
    update agents a set earn = a.earn + x.amount
      from (select m.aid, sum(m.amount) as amount from m where m.aid is not null group by m.aid) x
     where a.id = x.aid),
  tot as (select m.uid, sum(m.amount) as total from m group by m.uid),
  u as (
    update users us set balance = us.balance + tot.total, updated_at = now()
      from tot where us.id = tot.uid and us.id = any(v_uids)
    returning us.id, us.balance - tot.total as before)
  insert into ledger_entries (id, user_id, amount, type, ref, note, balance_after)
  -- Time first (11 hex digits of milliseconds), as ids.ts timeOrderedId: the primary key grows at its right edge.
  select 'led_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 11, '0')
           || substr(md5(random()::text || clock_timestamp()::text || (m.k * 1000000 + m.o)::text), 1, 12), m.uid, m.amount, m.type, m.ref, m.note,
         u.before + sum(m.amount) over (partition by m.uid order by m.k, m.o)
    from m join u on u.id = m.uid;
end
$fn$`;
