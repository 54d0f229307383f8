import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';
import { END_FUNCTION_SQL } from './end-function.js';
import { CLAIM_FUNCTION_SQL, CLAIM_MANY_FUNCTION_SQL } from './claim-function.js';
import { CHARGE_FUNCTION_SQL } from '../billing/charge-function.js';
import { RECORD_RUNS_FUNCTION_SQL } from '../agents/record-runs-function.js';

// The message path's functions plan each statement once per connection. Their statements take
// ids as arrays ("= any(v_sids)"); in PostgreSQL's default plan_cache_mode a cached statement
// compares its generic plan's cost (costed for an array of unknown size) with its first custom
// plans' (costed for the array at hand, usually one id) and, finding the custom ones cheaper,
// plans again on every call: a quarter of the backend's CPU on this path (perf, bench/sql-calls.ts).
// Every access in them is a lookup by key (enable_seqscan = off), so the generic plans use the
// same indexes; measured, they cost less per call. Same signatures, same rules.
export class SessionsGenericPlansMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(RECORD_RUNS_FUNCTION_SQL);
    this.addSql(CHARGE_FUNCTION_SQL);
    this.addSql(CLAIM_MANY_FUNCTION_SQL);
    this.addSql(CLAIM_FUNCTION_SQL);
    this.addSql(END_FUNCTION_SQL);
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
