import { Migration } from '@mikro-orm/migrations';
import { CHARGE_FUNCTION_SQL } from './charge-function.js';

// hub_charge_runs charges a run on another account's agent at most what the runner's balance
// covered (its own agent's runs still in full): the usage is that owner's host's word, and any
// figure it reported took a guest's balance far below zero. Same signature, same locks.
export class BillingGuestChargeCapMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(CHARGE_FUNCTION_SQL);
  }
}
