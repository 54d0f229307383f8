import { Migration } from '@mikro-orm/migrations';
import { CHARGE_FUNCTION_SQL } from './charge-function.js';

// An owner's earning on a run is its share of the part of the cost the runner's balance covered,
// not of the whole cost the host reported (charge-function.ts): the usage is the owner's word, and
// a share of any number would mint tokens. The runner is still charged in full.
export class BillingEarnCoveredMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CHARGE_FUNCTION_SQL);
  }
}
