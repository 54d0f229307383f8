import { Migration } from '@mikro-orm/migrations';
import { CHARGE_FUNCTION_SQL } from './charge-function.js';

// hub_charge_runs reads its runs out of the JSON once (into arrays) and moves the money in one
// statement (the earnings, the agents' `earn`, the balances and the ledger entries), where it read
// the JSON five times and built and read back a JSON list of moves. Same signature, same rule, same
// locks. bench/sql-calls.ts, alternating windows, four runs: PostgreSQL CPU per message (accept
// and end) 0.93–0.99 of before with paying guests on a paid agent (0.95–0.97 at batches of 30),
// 0.98–1.00 with one runner, who earns nothing (bench/RESULTS.md, twenty-sixth session).
export class BillingChargeOneStatementMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CHARGE_FUNCTION_SQL);
  }
}
