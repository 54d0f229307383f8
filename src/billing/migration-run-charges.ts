import { Migration } from '@mikro-orm/migrations';
import { CHARGE_FUNCTION_SQL } from './charge-function.js';
import { RECORD_RUNS_FUNCTION_SQL } from '../agents/record-runs-function.js';
import { END_FUNCTION_SQL } from '../sessions/end-function.js';

// Runs cost tokens: hub_charge_runs (charge-function.ts), called by hub_end_runs; the
// owners' earnings move from hub_record_runs into it. A run already done is charged in
// full even when that takes the balance below zero, so the ledger's balance_after may be
// negative now; `earn` is a new ledger entry type.
export class BillingRunChargesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table ledger_entries drop constraint if exists ledger_entries_balance_after_check`);
    this.addSql(`alter table ledger_entries drop constraint if exists ledger_entries_type_check`);
    this.addSql(`alter table ledger_entries add constraint ledger_entries_type_check
      check (type in ('grant','purchase','plan','spend','redeem','refund','earn'))`);
    this.addSql(`create index if not exists ledger_ref on ledger_entries(ref) where ref is not null`);
    this.addSql(CHARGE_FUNCTION_SQL);
    this.addSql(RECORD_RUNS_FUNCTION_SQL);
    this.addSql(END_FUNCTION_SQL);
  }
}
