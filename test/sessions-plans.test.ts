// The message path's PostgreSQL functions plan their statements once per connection, not per
// call (sessions/migration-generic-plans.ts: in the default plan_cache_mode their statements,
// taking ids as arrays, were planned again on every call — a quarter of the backend's CPU).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/log.js';
import { createTestDatabase } from './helpers/hub.js';

const FUNCTIONS = ['hub_accept', 'hub_end_runs', 'hub_claim_many', 'hub_record_runs', 'hub_charge_runs'];

test('the message path functions use generic plans and key lookups, on a fresh database', async (t) => {
  const tdb = await createTestDatabase();
  t.after(() => tdb.drop());
  const db = await openDatabase({ databaseUrl: tdb.url, dataDir: ':memory:' }, createLogger('silent'));
  t.after(() => db.close());
  const rows = await db.orm.em.getConnection().execute<Array<{ proname: string; proconfig: string[] | null }>>(
    `select proname, proconfig from pg_proc where proname in (${FUNCTIONS.map(() => '?').join(', ')})`, FUNCTIONS);
  assert.deepEqual(rows.map((r) => r.proname).sort(), [...FUNCTIONS].sort(), 'each function once (one signature)');
  for (const r of rows) {
    assert.ok(r.proconfig?.includes('plan_cache_mode=force_generic_plan'), `${r.proname}: ${r.proconfig}`);
    assert.ok(r.proconfig?.includes('enable_seqscan=off'), `${r.proname}: ${r.proconfig}`);
  }
});
