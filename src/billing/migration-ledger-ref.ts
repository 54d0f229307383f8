import { Migration } from '@mikro-orm/migrations';

// One index entry fewer per charged run (test/sessions-write-cost.test.ts): ledger_ref (the run or
// order an entry is for) served no read; the ledger is read by user and time (ledger_user_time),
// and every charged run wrote an entry into it, an earning owner's entry another.
export class BillingLedgerRefMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists ledger_ref`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index if not exists ledger_ref on ledger_entries(ref) where ref is not null`);
  }
}
