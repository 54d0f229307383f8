import { Migration } from '@mikro-orm/migrations';
import { ACCEPT_FUNCTION_SQL } from './accept-function.js';

// hub_accept refuses a message whose sender's token balance is ≤ 0 (outcome no_balance → 429 4091).
export class SessionsAcceptBalanceMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(ACCEPT_FUNCTION_SQL);
  }
}
