// The charging rule (billing/charge-function.ts) on one batch of runs, called as hub_end_runs
// calls it: runners pay in run order, in full on their own agents (even below zero) and on
// another account's agent at most what their balance covered before the run (its balance when
// the call began less its earlier runs in the batch: the cost is the other owner's host's word);
// an owner of a paid agent earns its share of what was covered; nobody earns on their own agent
// or on a free one; a run costing nothing, or charged nothing, moves nothing. Each user's entries follow spends-then-earnings in run
// order, with a running balance_after that ends at the balance, and the agents' `earn` agrees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';
import { createTestDatabase } from './helpers/hub.js';

test('one batch of charges: spends in order, earnings on what was covered, entries and counters that add up', async (t) => {
  const tdb = await createTestDatabase();
  t.after(() => tdb.drop());
  const db = await openDatabase({ databaseUrl: tdb.url, dataDir: ':memory:' }, createLogger('silent'));
  t.after(() => db.close());
  const conn = db.orm.em.getConnection();
  const sql = (q: string, v: unknown[] = []) => conn.execute<any[]>(q, v);

  for (const [id, balance] of [['usr_r1', 1000], ['usr_r2', 50], ['usr_o', 0]] as const) {
    await sql(`insert into users (id, name, balance) values (?, ?, ?)`, [id, id, balance]);
  }
  await sql(`insert into hosts (id, user_id, name, credential_hash, capacity) values ('hst_1', 'usr_o', 'h', 'x', 1)`);
  for (const [id, owner, pricing] of [['agt_a', 'usr_o', 'paid'], ['agt_b', 'usr_r1', 'paid'], ['agt_f', 'usr_o', 'free']] as const) {
    await sql(`insert into agents (id, owner_id, name, display_name, scope, pricing, usage_status, host_id, engine)
               values (?, ?, ?, ?, 'public', ?, 'online', 'hst_1', 'claude')`, [id, owner, id, id, pricing]);
  }
  const run = (n: number, uid: string, aid: string, cost: number) => ({ run: `run_${n}`, uid, aid, cost, share: 0.2 });
  const batch = [
    run(1, 'usr_r1', 'agt_a', 600), // covered 600 → the owner earns 120
    run(2, 'usr_r1', 'agt_a', 600), // covered 400 (1000 less run 1): charged 400 → the owner earns 80
    run(3, 'usr_r2', 'agt_b', 100), // covered 50: charged 50 → usr_r1, the owner of agt_b, earns 10
    run(4, 'usr_o', 'agt_a', 30), // its own agent: charged in full, below zero; no earning
    run(5, 'usr_r2', 'agt_f', 10), // a free agent, nothing left to cover it: charged nothing, no entry
    run(6, 'usr_r1', 'agt_a', 0), // costs nothing: no entry
  ];
  await sql(`select hub_charge_runs(?::jsonb)`, [JSON.stringify(batch)]);

  const balances = Object.fromEntries((await sql(`select id, balance from users order by id`)).map((r) => [r.id, Number(r.balance)]));
  assert.deepEqual(balances, { usr_o: 170, usr_r1: 10, usr_r2: 0 });
  const entries = await sql(`select user_id, type, ref, amount, balance_after, note from ledger_entries order by user_id, balance_after desc`);
  const of = (uid: string) => entries.filter((e) => e.user_id === uid).map((e) => [e.type, e.ref, Number(e.amount), Number(e.balance_after)]);
  // Listed by balance_after, highest first: run 1's spend, then run 3's earning (the last entry), then run 2's spend.
  assert.deepEqual(of('usr_r1'), [['spend', 'run_1', -600, 400], ['earn', 'run_3', 10, 10], ['spend', 'run_2', -400, 0]]);
  assert.deepEqual(of('usr_r2'), [['spend', 'run_3', -50, 0]]);
  assert.deepEqual(of('usr_o'), [['earn', 'run_2', 80, 170], ['earn', 'run_1', 120, 90], ['spend', 'run_4', -30, -30]]);
  for (const [uid, balance] of Object.entries(balances)) {
    const start = { usr_r1: 1000, usr_r2: 50, usr_o: 0 }[uid]!;
    assert.equal(entries.filter((e) => e.user_id === uid).reduce((s, e) => s + Number(e.amount), start), balance, `${uid}: the entries add up to the balance`);
  }
  const spendNotes = Object.fromEntries(entries.filter((e) => e.type === 'spend').map((e) => [`${e.user_id}/${e.ref}`, e.note]));
  assert.equal(spendNotes['usr_r1/run_1'], null, 'a run charged in full carries no note');
  assert.match(spendNotes['usr_r1/run_2'], /charged 400 of its 600 tokens/);
  assert.match(spendNotes['usr_r2/run_3'], /charged 50 of its 100 tokens/);
  const notes = Object.fromEntries(entries.filter((e) => e.type === 'earn').map((e) => [e.ref, e.note]));
  assert.equal(notes.run_1, null, 'a share of a cost covered in full carries no note');
  assert.match(notes.run_2, /share of the 400 of 600 tokens the runner's balance covered/);
  assert.match(notes.run_3, /share of the 50 of 100 tokens the runner's balance covered/);
  const earn = Object.fromEntries((await sql(`select id, earn from agents order by id`)).map((r) => [r.id, Number(r.earn)]));
  assert.deepEqual(earn, { agt_a: 200, agt_b: 10, agt_f: 0 });
});
